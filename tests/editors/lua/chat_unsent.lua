-- A chat message that cannot be sent (the server command does not exist): it stays below
-- `## You`, the chat stays modifiable, and an error says why.
local H = dofile(vim.env.HARNESS)
H.setup({ cmd = { vim.env.WORKSPACE .. '/no-such-tether', 'serve' } })
H.keep_notes()
H.input(':TetherChat<CR>ihello there<Esc><CR>')
H.when(function()
  return #H.result.notes > 0
end, function()
  local buf = require('tether.chat').current().buf
  H.result.lines = H.lines(buf)
  H.result.modifiable = vim.bo[buf].modifiable
  H.finish('done')
end)
