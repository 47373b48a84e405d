-- :TetherSessions in a new Neovim: what the picker offers (nothing picked).
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/notes.txt')
local select = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  select(items, opts, on_choice)
  H.finish('done')
end
H.later(function()
  vim.cmd('TetherSessions')
end)
