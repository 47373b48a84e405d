-- ask_user answered in Neovim: two questions in one run, the first picked from its choices
-- in vim.ui.select, the second typed through "Type an answer…" and vim.ui.input (the
-- harness answers both as a user would).
local H = dofile(vim.env.HARNESS)
H.setup()
H.select_answers = { 2, 3 }
H.input_answers = { 'call it tether' }

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.finish('done')
end)
vim.cmd('Tether pick for me')
