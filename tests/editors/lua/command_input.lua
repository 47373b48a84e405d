-- commandInput = "ask" in Neovim: a command's password prompt (agent/ask's secret) typed
-- with vim.fn.inputsecret, nothing shown; then a plain question through vim.ui.input, and a
-- [Y/n] answered with Enter alone ('': the command's default).
local H = dofile(vim.env.HARNESS)
H.setup({ settings = { commandInput = 'ask', autoApprove = { 'bash' } } })
H.input_answers = { 'yes', '' }
H.result.secrets = {}
local secrets = { vim.env.SECRET_ANSWER }
vim.fn.inputsecret = function(prompt)
  table.insert(H.result.secrets, prompt)
  return table.remove(secrets, 1)
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.finish('done')
end)
vim.cmd('Tether log in')
