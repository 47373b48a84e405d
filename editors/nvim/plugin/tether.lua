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
end, {
  nargs = '+',
  range = true,
  bang = true,
  desc = 'Tether: run a prompt in the editor session (! starts a new one)',
})

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

vim.api.nvim_create_user_command('TetherChat', function(opts)
  require('tether.chat').open({ new = opts.bang })
end, {
  nargs = 0,
  bang = true,
  desc = 'Tether: open the chat (! a new chat, a new session)',
})

vim.api.nvim_create_user_command('TetherSessions', function()
  commands().sessions()
end, { nargs = 0, desc = 'Tether: continue a session' })

vim.api.nvim_create_user_command('TetherRules', function()
  require('tether.rules').open()
end, { nargs = 0, desc = 'Tether: the approval rules in force (x revokes one)' })

vim.api.nvim_create_user_command('TetherRewind', function()
  require('tether.rewind').open()
end, { nargs = 0, desc = "Tether: go back to before a step of the session (files, conversation)" })

vim.api.nvim_create_user_command('TetherJobs', function()
  require('tether.jobs').list()
end, { nargs = 0, desc = "Tether: the session's background jobs (the one chosen: its output)" })

vim.api.nvim_create_user_command('TetherJobStop', function(opts)
  require('tether.jobs').stop(opts.args)
end, { nargs = '?', desc = 'Tether: stop a background job (default: the one of this buffer)' })

-- Deciding the approval that waits, from any buffer (the keys a/A/d/e/q work only inside
-- the approval's float, which :TetherApprove enters; r allows with a rule).
local function approve()
  return require('tether.approve')
end

local decide = {
  TetherApprove = {
    'go to the approval waiting (its float)',
    function()
      approve().focus()
    end,
  },
  TetherAllow = {
    'allow the call waiting',
    function()
      approve().decide({ decision = 'allow' })
    end,
  },
  TetherAllowAlways = {
    'allow the call waiting, and such calls for the rest of the session',
    function()
      approve().allow_always()
    end,
  },
  TetherAllowRule = {
    'allow the call waiting, and the calls its rule covers (e.g. `pytest *`)',
    function()
      approve().allow_rule()
    end,
  },
  TetherDeny = {
    'deny the call waiting (no feedback)',
    function()
      approve().decide({ decision = 'deny' })
    end,
  },
  TetherEdit = {
    'edit the call waiting before allowing it',
    function()
      approve().edit()
    end,
  },
}
-- What a command from anywhere says it did: the approval may not be on screen.
local said = {
  TetherAllow = 'allowed',
  TetherAllowAlways = 'allowed always',
  TetherDeny = 'denied',
}
for name, spec in pairs(decide) do
  vim.api.nvim_create_user_command(name, function()
    local pending = approve().pending()
    if not pending then
      vim.notify('Tether: no approval is waiting', vim.log.levels.INFO)
      return
    end
    spec[2]()
    if said[name] and approve().pending() ~= pending then
      local what = pending.title or pending.tool or 'the call'
      vim.notify(string.format('Tether: %s %s', said[name], what), vim.log.levels.INFO)
    end
  end, { nargs = 0, desc = 'Tether: ' .. spec[1] })
end
