-- The server's session commands in the chat: `/un` completed with <C-x><C-o> (the list is
-- the server's `agent/commands`), `/undo` sent with <C-s> runs `agent/command` (the model
-- is not called), then `/cost`.
local H = dofile(vim.env.HARNESS)
H.setup({})
local chat_mod = require('tether.chat')
H.input(':TetherChat<CR>')
H.when(function()
  return chat_mod.current() ~= nil and vim.api.nvim_get_current_buf() == chat_mod.current().buf
end, function()
  local buf = chat_mod.current().buf
  H.result.omnifunc = vim.bo[buf].omnifunc
  H.result.items = chat_mod.complete(0, '/')
  H.input('i/un<C-x><C-o><C-s>')
  H.when(function()
    return table.concat(H.lines(buf), '\n'):find('nothing to undo', 1, true) ~= nil
  end, function()
    H.result.after_undo = H.lines(buf)
    H.result.modifiable = vim.bo[buf].modifiable
    H.input('i/cost<C-s>')
    H.when(function()
      return table.concat(H.lines(buf), '\n'):find('nothing spent', 1, true) ~= nil
    end, function()
      H.result.after_cost = H.lines(buf)
      H.finish('done')
    end)
  end)
end)
