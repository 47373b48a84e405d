-- Tether's user commands. The modules load when a command first runs; the server starts
-- once require('tether').setup() was called and a file is opened (or on :Tether).
if vim.g.loaded_tether then
  return
end
vim.g.loaded_tether = true

local function commands()
  return require('tether.commands')
end

vim.api.nvim_create_user_command('Tether', function(opts)
  commands().command(opts)
end, { nargs = '+', range = true, desc = 'Tether: run a prompt (the selection is context)' })

vim.api.nvim_create_user_command('TetherCancel', function(opts)
  commands().cancel(opts.args)
end, {
  nargs = '?',
  complete = function()
    return commands().complete_runs()
  end,
  desc = 'Tether: cancel a run (default: the latest)',
})

vim.api.nvim_create_user_command('TetherLog', function()
  commands().log()
end, { nargs = 0, desc = 'Tether: open the transcript' })

vim.api.nvim_create_user_command('TetherSessions', function()
  commands().sessions()
end, { nargs = 0, desc = 'Tether: continue a session' })
