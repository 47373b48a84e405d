-- The context of a run: the buffer and the visual selection, in the negotiated encoding.
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/text.txt')
H.result.contexts = {}
local steps = {
  function() -- charwise selection from the globe to the "w" (multibyte characters before)
    vim.cmd('normal! 2G0f🌍vfw\27')
    vim.cmd("'<,'>Tether explain this")
  end,
  function() -- linewise, lines 1-2
    vim.cmd('normal! 1GVj\27')
    vim.cmd("'<,'>Tether explain these lines")
  end,
  function() -- the prompt key in visual mode (ui.input gives the prompt)
    H.input_answers = { 'from the key' }
    H.feed('3G0vl\\tt')
  end,
  function() -- no selection: the buffer only
    vim.cmd('Tether just the file')
  end,
}
H.on('TetherRunFinished', function(data)
  local run = H.capture(data)
  table.insert(H.result.contexts, { prompt = run.params.prompt, context = run.params.context })
  if #H.result.contexts == #steps then
    H.result.encoding = require('tether').get_client().offset_encoding
    H.finish('done')
  else
    H.later(steps[#H.result.contexts + 1])
  end
end)
H.later(steps[1])
