-- A message the server cannot run as configured (SETTINGS: no API key, a URL no server
-- answers): what the chat shows where it was typed, and whether the message can be sent
-- again. Env: SETTINGS (JSON merged into the settings), OPENAI_API_KEY as the test sets it.
local H = dofile(vim.env.HARNESS)
H.setup({ settings = vim.json.decode(vim.env.SETTINGS or '{}') })
H.keep_notes()
local chat_mod = require('tether.chat')
H.input(':TetherChat<CR>ihello there<Esc><CR>')
H.when(function()
  local chat = chat_mod.current()
  return chat ~= nil and vim.bo[chat.buf].modifiable and #H.lines(chat.buf) > 4
end, function()
  local buf = chat_mod.current().buf
  H.result.lines = H.lines(buf)
  H.finish('done')
end)
