-- A command that runs, in the chat and the transcript: while it runs its call's line says
-- the seconds so far and the last line it printed; then its result takes the line. The
-- command waits on a FIFO (`gate` in the workspace) that this scenario opens once the chat
-- showed a second gone by.
local H = dofile(vim.env.HARNESS)
H.setup({ settings = { autoApprove = { 'bash' } } })
local chat_mod = require('tether.chat')
local transcript = require('tether.transcript')

--- The seconds the status of a call's line says, if a line of `lines` has one.
local function seconds(lines)
  for _, line in ipairs(lines) do
    local said = line:match(' (%d+) s · compiling part one$')
    if said then
      return tonumber(said)
    end
  end
end

H.input(':TetherChat<CR>')
H.when(function()
  return chat_mod.current() ~= nil and vim.api.nvim_get_current_buf() == chat_mod.current().buf
end, function()
  H.input('ibuild it<Esc><CR>')
  local chat = chat_mod.current()
  H.when(function()
    local said = seconds(H.lines(chat.buf))
    return said ~= nil and said >= 1 and seconds(transcript.lines()) ~= nil
  end, function()
    H.result.running = { chat = H.lines(chat.buf), transcript = transcript.lines() }
    vim.system({ 'sh', '-c', 'echo go > gate' }, { cwd = vim.env.WORKSPACE })
  end)
end)

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.chat = H.lines(chat_mod.current().buf)
  H.result.transcript = transcript.lines()
  H.finish('done')
end)
