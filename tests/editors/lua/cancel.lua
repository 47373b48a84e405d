-- :TetherCancel during a slow model call (MODE=delay) or while an approval is shown
-- (MODE=approval; the edited file is on screen).
local H = dofile(vim.env.HARNESS)
H.setup()
local path = vim.env.WORKSPACE .. '/src/app.py'
vim.cmd.edit(path)
local buf = vim.api.nvim_get_current_buf()
local cancelled_at

local function cancel()
  cancelled_at = vim.uv.hrtime()
  vim.cmd('TetherCancel')
end

if vim.env.MODE == 'delay' then
  vim.api.nvim_create_autocmd('LspProgress', {
    pattern = 'begin',
    once = true,
    callback = function()
      H.later(cancel, 100)
    end,
  })
else
  H.on('TetherApprove', function(data)
    H.result.marks_shown = #H.approval_marks()
    H.result.maps_shown = #vim.api.nvim_buf_get_keymap(buf, 'n')
    H.later(cancel, 10)
  end)
end

H.on('TetherRunFinished', function(data)
  H.result.cancel_ms = (vim.uv.hrtime() - cancelled_at) / 1e6
  H.result.run = H.capture(data)
  H.result.transcript = require('tether.transcript').lines()
  H.later(function()
    H.result.marks_after = H.approval_marks()
    H.result.maps_after = #vim.api.nvim_buf_get_keymap(buf, 'n')
    H.result.floats_after = #H.floats()
    H.result.buffer_after = H.lines(buf)
    H.result.in_flight = #require('tether.commands').in_flight()
    H.finish('done')
  end, 50)
end)
vim.cmd('Tether take your time')
