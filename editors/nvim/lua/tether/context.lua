--- The `context` of a run: the buffer's URI and the selection, as an LSP range in the
--- position encoding the server negotiated.
local M = {}

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
  local context = { uri = vim.uri_from_bufnr(buf) }
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
