-- An edit's changes decided one by one in its float: `<leader>ta`, then each key of STEPS
-- (JSON list), the float's state recorded after each. Env: OPEN (file shown), MODIFY (JSON
-- lines: the buffer's text), STEPS.
local H = dofile(vim.env.HARNESS)
local env = vim.env
H.setup()
local path = env.WORKSPACE .. '/' .. env.OPEN
vim.cmd.edit(path)
local buf = vim.api.nvim_get_current_buf()
if env.MODIFY then
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.json.decode(env.MODIFY))
end
local preview = require('tether.preview')
H.result.steps = {}

--- The float's lines, keys, cursor line and change labels, if it is open.
local function float_state()
  local win = H.floats()[1]
  if not win then
    return vim.NIL
  end
  local fbuf = vim.api.nvim_win_get_buf(win)
  local labels, highlighted = {}, {}
  for _, m in
    ipairs(vim.api.nvim_buf_get_extmarks(fbuf, preview.hunk_ns, 0, -1, { details = true }))
  do
    if m[4].virt_text then
      table.insert(labels, { m[2] + 1, m[4].virt_text[1][1] })
    else
      table.insert(highlighted, { m[2] + 1, m[4].end_row })
    end
  end
  return {
    lines = H.lines(fbuf),
    keys = H.keys_shown({ win = win, buf = fbuf }),
    cursor = vim.api.nvim_win_get_cursor(win)[1],
    labels = labels,
    highlighted = highlighted,
    entered = vim.api.nvim_get_current_win() == win,
    inline = H.approval_marks(),
  }
end

H.on('TetherApprove', function(data)
  H.result.view = data.view.kind
  H.result.marks = #H.approval_marks()
  H.later(function()
    H.feed('<leader>ta')
    H.result.entered = float_state()
    for _, key in ipairs(vim.json.decode(env.STEPS)) do
      H.feed(key)
      table.insert(H.result.steps, float_state())
    end
  end)
end)

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.later(function()
    H.result.buffer_after = H.lines(buf)
    H.result.disk_after = vim.fn.readfile(path)
    H.result.marks_after = H.approval_marks()
    H.result.floats_after = #H.floats()
    H.finish('done')
  end, 50)
end)
vim.cmd('Tether make the change')
