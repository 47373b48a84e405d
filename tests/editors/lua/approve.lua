-- Approvals answered with the keys of the inline view or the float.
-- Env: OPEN (file to show, relative to WORKSPACE), MODIFY (JSON lines: unsaved text),
-- KEYS (JSON: the keys typed for each approval shown, e.g. "<leader>taa": go to it, allow), EDIT_LINES (JSON: the text saved after `e`;
-- without it the edit buffer is wiped unsaved),
-- INPUTS (JSON: vim.ui.input answers), UNDO ('1': press u after the run),
-- SETTINGS (JSON: merged into the settings).
local H = dofile(vim.env.HARNESS)
local env = vim.env
local keys = vim.json.decode(env.KEYS or '[]')
H.input_answers = vim.json.decode(env.INPUTS or '[]')
H.setup({ settings = vim.json.decode(env.SETTINGS or '{}') })

local buf, path
if env.OPEN then
  path = env.WORKSPACE .. '/' .. env.OPEN
  vim.cmd.edit(path)
  buf = vim.api.nvim_get_current_buf()
  if env.MODIFY then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.json.decode(env.MODIFY))
  end
end
H.result.shown = {}

H.on('TetherApprove', function(data)
  local view = data.view
  local seen = {
    tool = data.tool,
    view = view.kind,
    in_view = vim.api.nvim_get_current_buf() == view.buf,
    current_is_float = vim.api.nvim_win_get_config(0).relative ~= '',
    marks = H.approval_marks(),
    user_maps = buf and vim.tbl_map(function(m)
      return m.lhs
    end, vim.api.nvim_buf_get_keymap(buf, 'n')) or {},
  }
  if view.kind == 'float' then
    local config = vim.api.nvim_win_get_config(view.win)
    seen.float_lines = H.lines(view.buf)
    seen.title = config.title
    seen.keys = H.keys_shown(view)
  else
    seen.cursor = vim.api.nvim_win_get_cursor(0)
    seen.statusline = require('tether').statusline()
  end
  table.insert(H.result.shown, seen)
  local key = table.remove(keys, 1)
  H.later(function()
    H.feed(key)
    if key:sub(-1) == 'e' then
      seen.edit_name = vim.api.nvim_buf_get_name(0)
      seen.edit_lines = H.lines(0)
      seen.marks_while_editing = #H.approval_marks()
      if env.EDIT_LINES then
        vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.json.decode(env.EDIT_LINES))
        vim.cmd('write')
      else -- abandoned: the approval comes back
        vim.cmd('bwipeout!')
      end
    end
  end, 10)
end)

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.transcript = require('tether.transcript').lines()
  H.later(function() -- after the approval's cleanup and the save
    H.result.marks_after = H.approval_marks()
    H.result.floats_after = #H.floats()
    H.result.pending_after = require('tether.approve').pending() ~= nil
    if buf then
      H.result.buffer_after = H.lines(buf)
      H.result.modified_after = vim.bo[buf].modified
      H.result.disk_after = vim.fn.readfile(path)
      H.result.buffer_maps_after = vim.tbl_map(function(m)
        return m.lhs
      end, vim.api.nvim_buf_get_keymap(buf, 'n'))
      if env.UNDO == '1' then
        vim.api.nvim_set_current_buf(buf)
        H.feed('u')
        H.result.buffer_undone = H.lines(buf)
      end
    end
    H.finish('done')
  end, 50)
end)

vim.cmd('Tether ' .. (env.PROMPT or 'make the change'))
