-- An approval's float on a real terminal (tests/editors/test_approvals.py drives it in
-- tmux with keys): set-up and the file shown (OPEN); the keys come from tmux. The first
-- finished run ends it.
local H = dofile(vim.env.HARNESS)
local env = vim.env
H.setup()
vim.o.laststatus = 2
vim.cmd.edit(env.WORKSPACE .. '/' .. env.OPEN)
H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.later(function()
    H.finish('done')
  end, 30)
end)
vim.api.nvim_create_autocmd('UIEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      vim.api.nvim_echo({ { 'float-screen: ready' } }, false, {})
    end)
  end,
})
