--- How a proposed call is shown: an edit inline in the buffer that shows the file
--- (removed lines highlighted, added lines as virtual lines), anything else in a float.
local M = {}

M.ns = vim.api.nvim_create_namespace('tether.approve')
M.hunk_ns = vim.api.nvim_create_namespace('tether.approve.hunks')
M.hint_ns = vim.api.nvim_create_namespace('tether.approve.hint')

for name, link in pairs({
  TetherAdded = 'DiffAdd',
  TetherRemoved = 'DiffDelete',
  TetherHint = 'WarningMsg',
  TetherHunk = 'CursorLine',
  TetherAccepted = 'DiagnosticOk',
  TetherRejected = 'DiagnosticError',
}) do
  vim.api.nvim_set_hl(0, name, { link = link, default = true })
end

--- The lines of a text without their line ends (`\r\n`, `\n` or `\r`, as LSP cuts them).
---@param text string
---@return string[]
function M.text_lines(text)
  if text == '' then
    return {}
  end
  local lines = vim.split((text:gsub('\r\n?', '\n')), '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines) -- the last line's end, not a line
  end
  return lines
end

---@class tether.View
---@field kind 'inline'|'float'
---@field buf integer the buffer whose keys decide
---@field win? integer the float
---@field line? integer the first changed line (inline)
---@field change_marks? table<integer, integer[]> the extmarks of each change (inline)
---@field hunks? tether.Hunk[] the edit's changes, when the server sent them (float)
---@field where? integer[][] the float lines of each hunk, `{ first, last }` (1-based)
---@field hint? string the keys that decide (float): its footer, or rows below its text

---@class tether.Change
---@field from integer first removed row, 0-based (for an insertion: the row it goes before)
---@field to integer the row after the last removed one
---@field added string[] the new lines

--- What to mark: the server's hunks (`proposed.hunks`: whole lines of the file, a range
--- ending inside a line only at the end of a file without a final line end). From an older
--- server without hunks: the window as one change, the lines it holds unchanged at either
--- end left out.
---@param proposed table
---@param old string[] the window's old lines
---@param new string[] its new lines
---@return tether.Change[]
local function changes(proposed, old, new)
  if type(proposed.hunks) == 'table' then
    return vim.tbl_map(function(hunk)
      local stop = hunk.range['end']
      return {
        from = hunk.range.start.line,
        to = stop.line + (stop.character > 0 and 1 or 0),
        added = M.text_lines(hunk.text),
      }
    end, proposed.hunks)
  end
  local head, tail = 0, 0
  while head < #old and head < #new and old[head + 1] == new[head + 1] do
    head = head + 1
  end
  while tail < #old - head and tail < #new - head and old[#old - tail] == new[#new - tail] do
    tail = tail + 1
  end
  local top = proposed.range.start.line
  local added = vim.list_slice(new, head + 1, #new - tail)
  return { { from = top + head, to = top + #old - tail, added = added } }
end

--- Shows the preview's changed window (`proposed`: whole lines, its range in the file) in
--- `buf` itself: each change's replaced lines highlighted, its new ones as virtual lines.
--- Returns nil when the buffer does not hold the window's old lines where the range says.
---@param buf integer
---@param params table agent/approve params
---@param hint string
---@return tether.View?
function M.inline(buf, params, hint)
  local proposed = params.preview.proposed
  if type(proposed) ~= 'table' then
    return nil
  end
  local top = proposed.range.start.line -- 0-based; the window starts at a line start
  local old, new = M.text_lines(proposed.baseText), M.text_lines(proposed.text)
  if not vim.deep_equal(vim.api.nvim_buf_get_lines(buf, top, top + #old, false), old) then
    return nil -- the buffer is not what the window was taken from: use the float
  end
  local tab = string.rep(' ', vim.bo[buf].tabstop)
  local marks, first = {}, nil
  for index, change in ipairs(changes(proposed, old, new)) do
    local from, to = change.from, change.to -- removed rows [from, to)
    local added = {}
    for _, line in ipairs(change.added) do
      table.insert(added, { { (line:gsub('\t', tab)), 'TetherAdded' } })
    end
    if from < to or #added > 0 then
      for row = from, to - 1 do
        table.insert(marks, { row, { line_hl_group = 'TetherRemoved' }, index })
      end
      if #added > 0 then -- below the last removed line, else the line before, else above row 0
        local below = to > from and to - 1 or from - 1
        if below >= 0 then
          table.insert(marks, { below, { virt_lines = added }, index })
        else
          table.insert(marks, { 0, { virt_lines = added, virt_lines_above = true }, index })
        end
      end
      first = first or (to > from and from + 1 or math.max(from, 1)) -- 1-based
    end
  end
  if first == nil then
    return nil
  end
  local by_change = {} ---@type table<integer, integer[]>
  for _, mark in ipairs(marks) do
    local id = vim.api.nvim_buf_set_extmark(buf, M.ns, mark[1], 0, mark[2])
    by_change[mark[3]] = by_change[mark[3]] or {}
    table.insert(by_change[mark[3]], id)
  end
  local title = string.format(' Tether: %s   %s ', params.title or params.tool, hint)
  vim.api.nvim_buf_set_extmark(buf, M.ns, first - 1, 0, {
    virt_lines = { { { title, 'TetherHint' } } },
    virt_lines_above = true,
  })
  return { kind = 'inline', buf = buf, line = first, change_marks = by_change }
end

--- An inline view no longer shows a change the user rejected: the file keeps those lines.
---@param view tether.View
---@param index integer the change (1-based, in the order of the server's hunks)
function M.drop_change(view, index)
  if view.kind ~= 'inline' or not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  for _, id in ipairs((view.change_marks or {})[index] or {}) do
    vim.api.nvim_buf_del_extmark(view.buf, M.ns, id)
  end
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

--- The parts of a hint (` · ` between them) in rows no wider than `width`.
---@param hint string
---@param width integer
---@return string[]
local function hint_rows(hint, width)
  local rows, row = {}, ''
  for _, part in ipairs(vim.split(hint, ' · ', { plain = true })) do
    local longer = row == '' and part or (row .. ' · ' .. part)
    if row ~= '' and vim.fn.strdisplaywidth(longer) > width then
      table.insert(rows, row)
      row = part
    else
      row = longer
    end
  end
  table.insert(rows, row)
  return rows
end

--- The float as tall as its text shows wrapped (hint rows included), within the editor.
---@param view tether.View
local function fit_height(view)
  local height = vim.api.nvim_win_text_height(view.win, {}).all
  local most = math.max(vim.o.lines - 6, 3)
  vim.api.nvim_win_set_config(view.win, { height = math.max(1, math.min(height, most)) })
end

--- Shows the keys of a float: in its footer when they fit the float's width, else in rows
--- below its text (a footer cannot wrap: Neovim cuts it at the border).
---@param view tether.View
---@param hint string
function M.set_hint(view, hint)
  view.hint = hint
  if not (view.win and vim.api.nvim_win_is_valid(view.win)) then
    return
  end
  vim.api.nvim_buf_clear_namespace(view.buf, M.hint_ns, 0, -1)
  local width = vim.api.nvim_win_get_width(view.win)
  local footer = ' ' .. hint .. ' '
  if vim.fn.strdisplaywidth(footer) <= width then
    vim.api.nvim_win_set_config(view.win, { footer = footer, footer_pos = 'center' })
  else
    vim.api.nvim_win_set_config(view.win, { footer = '' })
    local rows = vim.tbl_map(function(row)
      return { { row, 'TetherHint' } }
    end, hint_rows(hint, width - 1))
    table.insert(rows, 1, { { '' } })
    local last = vim.api.nvim_buf_line_count(view.buf) - 1
    vim.api.nvim_buf_set_extmark(view.buf, M.hint_ns, last, 0, { virt_lines = rows })
  end
  fit_height(view)
end

--- Shows a call in a floating window, at the top right; entered only when `enter` (the user
--- asked to decide): a float that takes focus would swallow the keys of a user typing.
--- Lines wider than the editor wrap, so nothing of the change is cut at the edge.
---@param params table
---@param hint string
---@param enter? boolean
---@return tether.View
function M.float(params, hint, enter)
  local lines, filetype = float_lines(params)
  local shown = params.preview or {}
  local hunks = shown.kind == 'diff' and require('tether.hunks').of(shown.proposed) or nil
  local where
  if hunks and #hunks > 0 then -- each change marked where the diff shows it, else alone
    where = require('tether.hunks').locate(lines, hunks)
    if not where then
      local header = vim.tbl_filter(function(l)
        return vim.startswith(l, '--- ') or vim.startswith(l, '+++ ')
      end, vim.list_slice(lines, 1, 2))
      lines, where = require('tether.hunks').render(header, hunks)
    end
  else
    hunks = nil
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  local title = ' Tether: ' .. (params.title or params.tool) .. ' '
  local width = math.max(vim.fn.strdisplaywidth(title), vim.fn.strdisplaywidth(hint) + 2)
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  -- room for a change's label (`◀ change 1 of 2`) after its line
  width = math.min(width + (hunks and 20 or 2), math.max(vim.o.columns - 4, 20))
  local win = vim.api.nvim_open_win(buf, enter == true, {
    relative = 'editor',
    row = 1,
    col = math.max(0, vim.o.columns - width - 2),
    focusable = true,
    zindex = 60,
    width = width,
    height = math.max(1, math.min(#lines, math.max(vim.o.lines - 6, 3))),
    style = 'minimal',
    border = 'rounded',
    title = title,
    title_pos = 'center',
  })
  vim.wo[win].wrap = true
  vim.wo[win].showbreak = '↳ ' -- a wrapped line's rest is not a line of its own
  local view = { kind = 'float', buf = buf, win = win, hunks = hunks, where = where }
  M.set_hint(view, hint)
  return view
end

--- Removes what a view shows: every extmark, the float.
---@param view tether.View
function M.close(view)
  if view.kind == 'changes' then
    require('tether.changes').close(view)
  elseif view.kind == 'inline' then
    if vim.api.nvim_buf_is_valid(view.buf) then
      vim.api.nvim_buf_clear_namespace(view.buf, M.ns, 0, -1)
    end
  elseif view.win and vim.api.nvim_win_is_valid(view.win) then
    vim.api.nvim_win_close(view.win, true)
  end
end

return M
