-- configure() called right after a file is opened, while the client is still starting
-- (vim.lsp.get_clients() does not list it yet): the settings must reach the server.
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/src/app.py')
local buf = vim.api.nvim_get_current_buf()
H.result.clients_listed = #vim.lsp.get_clients({ name = 'tether' })
require('tether').configure({ autoApprove = { 'edit_file' } })
H.result.shown = {}
H.on('TetherApprove', function(data)
  table.insert(H.result.shown, data.tool)
  require('tether.approve').decide({ decision = 'deny' })
end)
H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.buffer_after = H.lines(buf)
  H.finish('done')
end)
vim.cmd('Tether make the change')
