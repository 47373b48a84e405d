--- Answers `agent/diagnostics`: the problems Neovim knows of (`vim.diagnostic.get`), from
--- every source (language servers, linters), as LSP Diagnostics.
---
--- `vim.diagnostic` counts columns in bytes; the answer counts them in the position encoding
--- negotiated with Tether (utf-16 unless the server picked another), like every position
--- the plugin sends. Severities are the same numbers in both (1 error … 4 hint).
local M = {}

local buffers = require('tether.buffers')

--- An LSP position of a (0-based row, 0-based byte column) point of a loaded buffer.
---@param buf integer
---@param row integer
---@param col integer
---@param encoding string
---@return lsp.Position
local function position(buf, row, col, encoding)
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  if not line then -- past the last line (a diagnostic at the end of the file)
    return { line = row, character = 0 }
  end
  col = math.max(0, math.min(col or 0, #line))
  return { line = row, character = vim.lsp.util.character_offset(buf, row, col, encoding) }
end

--- One `vim.Diagnostic` as an LSP Diagnostic.
---@param buf integer
---@param d vim.Diagnostic
---@param encoding string
---@return table
function M.to_lsp(buf, d, encoding)
  local end_row = d.end_lnum or d.lnum
  local end_col = d.end_col or d.col
  local item = {
    range = {
      start = position(buf, d.lnum, d.col, encoding),
      ['end'] = position(buf, end_row, end_col, encoding),
    },
    severity = d.severity,
    message = d.message,
    source = d.source,
  }
  if type(d.code) == 'string' or type(d.code) == 'number' then
    item.code = d.code
  end
  return item
end

--- The problems of one loaded buffer.
---@param buf integer
---@param encoding string
---@return table[]
local function of_buffer(buf, encoding)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, M.to_lsp(buf, d, encoding))
  end
  return list
end

--- The answer for `uris` (nil: every loaded file buffer that has problems). An asked
--- document that is not loaded, or has no problems, gets an empty list.
---@param uris? string[]
---@param encoding string
---@return { items: table[] }
function M.collect(uris, encoding)
  local items = {}
  if uris then
    for _, uri in ipairs(uris) do
      local buf = buffers.find(uri)
      table.insert(items, { uri = uri, diagnostics = buf and of_buffer(buf, encoding) or {} })
    end
    return { items = items }
  end
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(nil)) do
    local buf = d.bufnr
    if buf and not seen[buf] and vim.api.nvim_buf_is_loaded(buf) and buffers.is_file(buf) then
      seen[buf] = true
      local list = of_buffer(buf, encoding)
      if #list > 0 then
        table.insert(items, { uri = vim.uri_from_bufnr(buf), diagnostics = list })
      end
    end
  end
  return { items = items }
end

--- The handler: its return value is the response.
---@param params? { uris?: string[] }
---@param ctx? table
---@return { items: table[] }
function M.handle(_, params, ctx)
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local uris = type(params) == 'table' and params.uris or nil
  if type(uris) ~= 'table' then -- absent, or JSON null (vim.NIL)
    uris = nil
  end
  return M.collect(uris, encoding)
end

return M
