--- The `context` of a run: the buffer's URI, the selection (an LSP range in the position
--- encoding the server negotiated, and its text), the lines on screen and the open files.
local M = {}

M.MAX_OPEN_FILES = 20
M.MAX_SELECTED_BYTES = 100000

---@type integer[] buffers by the time the user last entered them, most recent last
local entered = {}

--- Records that the user entered a buffer (a `BufEnter` autocmd calls it), for `openFiles`.
---@param buf integer
function M.entered(buf)
  for i = #entered, 1, -1 do
    if entered[i] == buf then
      table.remove(entered, i)
    end
  end
  table.insert(entered, buf)
  if #entered > 200 then
    table.remove(entered, 1)
  end
end

--- The file buffer the user entered last (still loaded), if any: a chat's context.
---@return integer?
function M.last_file()
  for i = #entered, 1, -1 do
    local buf = entered[i]
    if vim.api.nvim_buf_is_loaded(buf) and require('tether.buffers').is_file(buf) then
      return buf
    end
  end
  return nil
end

--- The listed, loaded file buffers, most recently entered first (at most `MAX_OPEN_FILES`).
---@return string[] uris
function M.open_files()
  local rank = {}
  for i, buf in ipairs(entered) do
    rank[buf] = i
  end
  local bufs = vim.tbl_filter(function(buf)
    return vim.bo[buf].buflisted
      and vim.api.nvim_buf_is_loaded(buf)
      and require('tether.buffers').is_file(buf)
  end, vim.api.nvim_list_bufs())
  table.sort(bufs, function(a, b)
    local ra, rb = rank[a] or 0, rank[b] or 0
    if ra ~= rb then
      return ra > rb
    end
    return a > b -- never entered (loaded by :badd, a plugin): the newest first
  end)
  local uris = {}
  for i = 1, math.min(#bufs, M.MAX_OPEN_FILES) do
    table.insert(uris, vim.uri_from_bufnr(bufs[i]))
  end
  return uris
end

--- The lines of `buf` on screen in its window (the current one preferred), as a range.
---@param buf integer
---@param encoding string
---@return table?
local function visible_range(buf, encoding)
  local win = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(win) ~= buf then
    win = vim.fn.bufwinid(buf)
    if win == -1 then
      return nil
    end
  end
  local top, bottom = unpack(vim.api.nvim_win_call(win, function()
    return { vim.fn.line('w0'), vim.fn.line('w$') }
  end))
  local last = vim.api.nvim_buf_get_lines(buf, bottom - 1, bottom, false)[1] or ''
  local width = vim.lsp.util.character_offset(buf, bottom - 1, #last, encoding)
  return {
    start = { line = top - 1, character = 0 },
    ['end'] = { line = bottom - 1, character = width },
  }
end

---@class tether.Range
---@field start integer[] { row (1-based), col (0-based byte) }
---@field finish integer[] { row, col } of the last selected character (inclusive)
---@field linewise boolean whole lines from start's row to finish's row

--- An LSP position of a (1-based row, 0-based byte column) point, clamped to the line.
local function position(buf, row, col, encoding)
  local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
  col = math.max(0, math.min(col, #line))
  return { line = row - 1, character = vim.lsp.util.character_offset(buf, row - 1, col, encoding) }
end

--- The context of a buffer (nil for a buffer that holds no file).
---@param buf integer
---@param range? tether.Range
---@param encoding string
---@return table?
function M.of(buf, range, encoding)
  if not require('tether.buffers').is_file(buf) then
    return nil
  end
  local context = {
    uri = vim.uri_from_bufnr(buf),
    visibleRange = visible_range(buf, encoding),
    openFiles = M.open_files(),
  }
  if range then
    local srow, scol = range.start[1], range.start[2]
    local erow, ecol = range.finish[1], range.finish[2]
    if srow > erow or (srow == erow and scol > ecol) then
      srow, scol, erow, ecol = erow, ecol, srow, scol
    end
    local last = vim.api.nvim_buf_get_lines(buf, erow - 1, erow, false)[1] or ''
    if range.linewise then
      scol, ecol = 0, #last
    else
      ecol = math.min(ecol, #last) -- the end is exclusive: past the last character
      ecol = ecol < #last and ecol + 1 + vim.str_utf_end(last, ecol + 1) or #last
    end
    context.selection = {
      start = position(buf, srow, scol, encoding),
      ['end'] = position(buf, erow, ecol, encoding),
    }
    local first = vim.api.nvim_buf_get_lines(buf, srow - 1, srow, false)[1] or ''
    scol = math.min(scol, #first)
    local text = vim.api.nvim_buf_get_text(buf, srow - 1, scol, erow - 1, ecol, {})
    local joined = table.concat(text, '\n')
    if #joined > M.MAX_SELECTED_BYTES then -- cut at a character's start; the range says all
      local cut = M.MAX_SELECTED_BYTES + 1
      joined = joined:sub(1, cut + vim.str_utf_start(joined, cut) - 1)
    end
    context.selectedText = joined
  end
  return context
end

--- The range of a user command: the Visual selection when the command was given from
--- it (`:'<,'>`), else the lines of its range; nil without a range.
---@param opts table the user command's arguments
---@return tether.Range?
function M.from_command(opts)
  if opts.range == 0 then
    return nil
  end
  local vs = vim.api.nvim_buf_get_mark(0, '<')
  local ve = vim.api.nvim_buf_get_mark(0, '>')
  local mode = vim.fn.visualmode()
  if mode ~= '' and mode ~= 'V' and vs[1] == opts.line1 and ve[1] == opts.line2 then
    return { start = vs, finish = ve, linewise = false }
  end
  return { start = { opts.line1, 0 }, finish = { opts.line2, 0 }, linewise = true }
end

--- In Visual mode: the selection, and Visual mode is left. Otherwise nil.
---@return tether.Range?
function M.from_visual()
  local mode = vim.fn.mode()
  if mode ~= 'v' and mode ~= 'V' and mode ~= '\22' then
    return nil
  end
  local a, b = vim.fn.getpos('v'), vim.fn.getpos('.')
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)
  return { start = { a[2], a[3] - 1 }, finish = { b[2], b[3] - 1 }, linewise = mode == 'V' }
end

return M
