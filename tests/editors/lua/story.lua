-- The story: `:Tether fix the failing test` on the demo project, from its test file;
-- every proposed call is allowed with `<leader>ta` then `a` in its float; the fix is in the buffer.
local H = dofile(vim.env.HARNESS)
H.setup()
vim.cmd.edit(vim.env.WORKSPACE .. '/tests/test_stock.py')
H.result.shown = {}
H.on('TetherApprove', function(data)
  local seen = { tool = data.tool, view = data.view.kind }
  if data.view.kind == 'float' then
    seen.lines = H.lines(data.view.buf)
  end
  table.insert(H.result.shown, seen)
  H.later(function()
    H.feed('<leader>taa') -- go to the approval (:TetherApprove), allow
  end, 10)
end)
H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.transcript = require('tether.transcript').lines()
  local stock = vim.env.WORKSPACE .. '/inventory/stock.py'
  local buf = require('tether.buffers').find(vim.uri_from_fname(stock))
  H.result.stock_buffer = buf and H.lines(buf)
  H.result.stock_modified = buf and vim.bo[buf].modified
  H.result.stock_disk = vim.fn.readfile(stock)
  H.result.floats_after = #H.floats()
  H.finish('done')
end)
vim.cmd('Tether fix the failing test')
