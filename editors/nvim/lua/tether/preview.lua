--- How a proposed call is shown: an edit inline in the buffer that shows the file
--- (removed lines highlighted, added lines as virtual lines), anything else in a float.
local M = {}

M.ns = vim.api.nvim_create_namespace('tether.approve')

for name, link in pairs({
  TetherAdded = 'DiffAdd',
  TetherRemoved = 'DiffDelete',
  TetherHint = 'WarningMsg',
}) do
  vim.api.nvim_set_hl(0, name, { link = link, default = true })
end

---@class tether.DiffLine
---@field kind ' '|'-'|'+'
---@field text string

---@class tether.Hunk
---@field old_start integer 1-based first line of the hunk in the old text
---@field lines tether.DiffLine[]

--- The hunks of a unified diff.
---@param diff string
---@return tether.Hunk[]
function M.parse_diff(diff)
  local hunks = {}
  local hunk
  for _, line in ipairs(vim.split(diff or '', '\n', { plain = true })) do
    local old_start = line:match('^@@ %-(%d+)')
    if old_start then
      hunk = { old_start = tonumber(old_start), lines = {} }
      table.insert(hunks, hunk)
    elseif hunk and not vim.startswith(line, '\\') then
      local kind = line:sub(1, 1)
      if kind == ' ' or kind == '-' or kind == '+' then
        table.insert(hunk.lines, { kind = kind, text = line:sub(2) })
      end
    end
  end
  return hunks
end

---@class tether.View
---@field kind 'inline'|'float'
---@field buf integer the buffer whose keys decide
---@field win? integer the float
---@field line? integer the first changed line (inline)

--- Shows a diff in `buf` itself. Returns nil when the diff does not fit the buffer (its
--- context and removed lines are not the buffer's).
---@param buf integer
---@param params table agent/approve params
---@param hint string
---@return tether.View?
function M.inline(buf, params, hint)
  local hunks = M.parse_diff(params.preview.diff)
  local count = vim.api.nvim_buf_line_count(buf)
  local tab = string.rep(' ', vim.bo[buf].tabstop)
  local marks, first = {}, nil
  for _, hunk in ipairs(hunks) do
    local old = hunk.old_start == 0 and 1 or hunk.old_start
    local added = {}
    local function flush()
      if #added == 0 then
        return
      end
      local virt = vim.tbl_map(function(text)
        return { { (text:gsub('\t', tab)), 'TetherAdded' } }
      end, added)
      local anchor = old - 1 -- below the last old line passed, else above the first
      if anchor >= 1 then
        table.insert(marks, { anchor - 1, { virt_lines = virt } })
      else
        table.insert(marks, { 0, { virt_lines = virt, virt_lines_above = true } })
      end
      first = first or math.max(anchor, 1)
      added = {}
    end
    for _, line in ipairs(hunk.lines) do
      if line.kind == '+' then
        table.insert(added, line.text)
      else
        flush()
        local current = vim.api.nvim_buf_get_lines(buf, old - 1, old, false)[1]
        if old > count or current ~= line.text then
          return nil -- the buffer is not what the diff was made from: use the float
        end
        if line.kind == '-' then
          table.insert(marks, { old - 1, { line_hl_group = 'TetherRemoved' } })
          first = first or old
        end
        old = old + 1
      end
    end
    flush()
  end
  if not first then
    return nil
  end
  for _, mark in ipairs(marks) do
    vim.api.nvim_buf_set_extmark(buf, M.ns, mark[1], 0, mark[2])
  end
  local title = string.format(' Tether: %s   %s ', params.title or params.tool, hint)
  vim.api.nvim_buf_set_extmark(buf, M.ns, first - 1, 0, {
    virt_lines = { { { title, 'TetherHint' } } },
    virt_lines_above = true,
  })
  return { kind = 'inline', buf = buf, line = first }
end

--- The lines a float shows for a call.
---@param params table
---@return string[] lines
---@return string filetype
local function float_lines(params)
  local preview = params.preview or {}
  if preview.kind == 'command' then
    local lines = vim.tbl_map(function(l)
      return '$ ' .. l
    end, vim.split(preview.command or '', '\n', { plain = true }))
    vim.list_extend(lines, { '', 'in ' .. (preview.cwd or '?') })
    return lines, 'sh'
  end
  local lines = vim.split((preview.diff or ''):gsub('\n$', ''), '\n', { plain = true })
  return lines, 'diff'
end

--- Shows a call in a floating window (entered, so that its keys work).
---@param params table
---@param hint string
---@return tether.View
function M.float(params, hint)
  local lines, filetype = float_lines(params)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  local title = ' Tether: ' .. (params.title or params.tool) .. ' '
  local footer = ' ' .. hint .. ' '
  local width = math.max(vim.fn.strdisplaywidth(title), vim.fn.strdisplaywidth(footer))
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 2, math.max(vim.o.columns - 4, 20))
  local height = math.min(#lines, math.max(vim.o.lines - 6, 3))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    title = title,
    title_pos = 'center',
    footer = footer,
    footer_pos = 'center',
  })
  vim.wo[win].wrap = false
  return { kind = 'float', buf = buf, win = win }
end

--- Removes what a view shows: every extmark, the float.
---@param view tether.View
function M.close(view)
  if view.kind == 'inline' then
    if vim.api.nvim_buf_is_valid(view.buf) then
      vim.api.nvim_buf_clear_namespace(view.buf, M.ns, 0, -1)
    end
  elseif view.win and vim.api.nvim_win_is_valid(view.win) then
    vim.api.nvim_win_close(view.win, true)
  end
end

return M
