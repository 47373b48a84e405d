-- The context of a run: the buffer, the visual selection (range and text) in the negotiated
-- encoding, the lines on screen and the open files (most recently entered first).
local H = dofile(vim.env.HARNESS)
H.setup()
local ws = vim.env.WORKSPACE
vim.cmd.edit(ws .. '/a.txt')
vim.cmd.edit(ws .. '/b.txt')
vim.cmd.badd(ws .. '/not-loaded.txt') -- listed, never loaded: not an open file
vim.cmd.edit(ws .. '/text.txt')
vim.cmd('TetherLog') -- the transcript's window first: the screen measured below stays
vim.cmd.wincmd('p')
H.result.contexts = {}
H.result.screen = {}

local function tether(command)
  H.result.screen[#H.result.contexts + 1] = { vim.fn.line('w0'), vim.fn.line('w$') }
  vim.cmd(command)
end

local steps = {
  function() -- charwise selection from the globe to the "w" (multibyte characters before)
    vim.cmd('normal! 2G0f🌍vfw\27')
    tether("'<,'>Tether explain this")
  end,
  function() -- linewise, lines 1-2
    vim.cmd('normal! 1GVj\27')
    tether("'<,'>Tether explain these lines")
  end,
  function() -- the prompt key in visual mode (ui.input gives the prompt)
    H.input_answers = { 'from the key' }
    H.result.screen[#H.result.contexts + 1] = { vim.fn.line('w0'), vim.fn.line('w$') }
    H.feed('3G0vl\\tt')
  end,
  function() -- no selection, scrolled down, after visiting a.txt: a.txt is the second file
    vim.cmd.edit(ws .. '/a.txt')
    vim.cmd.edit(ws .. '/text.txt')
    vim.cmd('normal! 50Gzt')
    tether('Tether just the file')
  end,
}
H.on('TetherRunFinished', function(data)
  local run = H.capture(data)
  table.insert(H.result.contexts, { prompt = run.params.prompt, context = run.params.context })
  H.result.outcomes = H.result.outcomes or {}
  table.insert(H.result.outcomes, run.error or run.result.outcome)
  if #H.result.contexts == #steps then
    H.result.encoding = require('tether').get_client().offset_encoding
    H.finish('done')
  else
    H.later(steps[#H.result.contexts + 1])
  end
end)
H.later(steps[1])
