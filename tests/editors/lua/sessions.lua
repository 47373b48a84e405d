-- :TetherSessions lists the sessions (the server's, else those this Neovim ran) and
-- continues the one picked.
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/notes.txt')
H.result.runs = {}
H.result.notes = {}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(H.result.notes, msg)
  if msg:find('no session yet', 1, true) then
    H.later(function()
      vim.cmd('Tether first question')
    end)
  end
  return notify(msg, level, opts)
end
H.on('TetherRunFinished', function(data)
  table.insert(H.result.runs, H.capture(data))
  if #H.result.runs == 1 then
    H.select_answers = { 1 }
    H.input_answers = { 'and now?' }
    H.later(function()
      vim.cmd('TetherSessions')
    end)
  else
    H.result.sessions = require('tether.sessions').list
    H.finish('done')
  end
end)
H.later(function()
  vim.cmd('TetherSessions') -- none yet
end)
