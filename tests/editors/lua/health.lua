-- :checkhealth tether with the server running.
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/notes.txt')
H.later(function()
  assert(
    vim.wait(10000, function()
      local client = require('tether').get_client()
      return client ~= nil and client.initialized
    end, 10),
    'the server did not start'
  )
  vim.cmd('checkhealth tether')
  H.result.report = H.lines(0)
  H.finish('done')
end)
