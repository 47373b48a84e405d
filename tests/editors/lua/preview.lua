-- The inline view of one agent/approve's params (PARAMS, JSON) on a buffer holding LINES
-- (JSON), without a server: the marks it sets.
local H = dofile(vim.env.HARNESS)
H.later(function()
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.json.decode(vim.env.LINES))
  local view = require('tether.preview').inline(buf, vim.json.decode(vim.env.PARAMS), 'hint')
  H.result.view = view and view.kind or vim.NIL
  H.result.marks = H.approval_marks()
  H.finish('done')
end)
