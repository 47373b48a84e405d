-- The chat on a real terminal (tests/editors/test_chat.py drives it in tmux with keys):
-- set-up and the file shown; the keys come from tmux. The first finished run ends it.
-- Env: OPEN, SETTINGS.
local H = dofile(vim.env.HARNESS)
local env = vim.env
H.setup({ settings = vim.json.decode(env.SETTINGS or '{}') })
vim.o.laststatus = 2
vim.cmd.edit(env.WORKSPACE .. '/' .. env.OPEN)
H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.later(function()
    H.result.chat = H.lines(require('tether.chat').current().buf)
    H.finish('done')
  end, 30)
end)
vim.api.nvim_create_autocmd('UIEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      vim.api.nvim_echo({ { 'chat-screen: ready' } }, false, {})
    end)
  end,
})
