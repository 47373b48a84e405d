-- The editor session: :Tether continues the session of the latest :Tether, refuses while a
-- run of it is in flight, and :Tether! starts a new one (which later runs continue, even when
-- the older run ends last). Env: FAST_SCRIPT (the script of the runs after the first).
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/notes.txt')
H.result.runs = {}
H.keep_notes()
local commands = require('tether.commands')

vim.api.nvim_create_autocmd('LspProgress', {
  pattern = 'begin',
  once = true,
  callback = H.step(function() -- run one is in flight
    H.result.in_flight_before = #commands.in_flight()
    vim.cmd('Tether two') -- refused: the session has a run in flight
    H.result.in_flight_after_two = #commands.in_flight()
    require('tether').configure({ script = vim.env.FAST_SCRIPT }) -- three ends before one
    vim.cmd('Tether! three') -- a new editor session, running beside it
    H.result.in_flight_after_three = #commands.in_flight()
  end),
})

H.on('TetherRunFinished', function(data)
  table.insert(H.result.runs, H.capture(data))
  if #H.result.runs == 1 then -- three ended; one (the older session) still runs
    H.later(function()
      H.result.in_flight_at_four = vim.tbl_map(function(run)
        return run.prompt
      end, commands.in_flight())
      vim.cmd('Tether four') -- continues three's session: one's run does not hold it up
    end)
  elseif #H.result.runs == 3 then -- one ended last: the editor session is still three's
    H.later(function()
      vim.cmd('Tether five')
    end)
  elseif #H.result.runs == 4 then
    H.finish('done')
  end
end)
vim.cmd('Tether one')
