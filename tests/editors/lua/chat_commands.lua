-- The server's session commands in the chat: asked of the server once it is up
-- (`agent/commands`), `/un` completed with <C-x><C-o>, `/undo` sent with <C-s> runs
-- `agent/command` (the model is not called), then `/cost`.
local H = dofile(vim.env.HARNESS)
H.setup({})
local chat_mod = require('tether.chat')

local function contains(buf, text)
  return table.concat(H.lines(buf), '\n'):find(text, 1, true) ~= nil
end

local function then_cost(buf)
  H.result.after_undo = H.lines(buf)
  H.result.modifiable = vim.bo[buf].modifiable
  H.input('i/cost<C-s>')
  H.when(function()
    return contains(buf, 'nothing spent')
  end, function()
    H.result.after_cost = H.lines(buf)
    H.finish('done')
  end)
end

local function complete_and_undo(buf)
  H.result.items = chat_mod.complete(0, '/')
  H.input('i/un<C-x><C-o><C-s>')
  H.when(function()
    return contains(buf, 'nothing to undo')
  end, function()
    then_cost(buf)
  end)
end

H.input(':TetherChat<CR>')
H.when(function()
  return chat_mod.current() ~= nil and vim.api.nvim_get_current_buf() == chat_mod.current().buf
end, function()
  local buf = chat_mod.current().buf
  H.result.omnifunc = vim.bo[buf].omnifunc
  -- as once the server is up (here it starts with the chat): the list is asked of it
  local client = assert(require('tether').ensure_client(buf))
  require('tether.client').when_ready(client, buf, function()
    complete_and_undo(buf)
  end)
end)
