--- Keeping the server's copy of the buffers exact before answering it.
---
--- Neovim sends `textDocument/didChange` up to 150 ms after the typing (the client's
--- `debounce_text_changes`); an answer sent meanwhile (an allow, an applied edit) would be
--- read by the server against text the user has already changed. `flush` sends the pending
--- changes now; `version` is the version the server will know the buffer by.
local M = {}

--- Sends the pending `didChange` of every buffer (or of `buf`) of a client, now.
---@param client_id integer?
---@param buf? integer
function M.flush(client_id, buf)
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if not client then
    return
  end
  local ok, tracking = pcall(require, 'vim.lsp._changetracking')
  if ok and type(tracking.flush) == 'function' then
    pcall(tracking.flush, client, buf)
  end
end

--- The version of a buffer as the LSP client reports it (0 for a buffer never changed).
---@param buf integer
---@return integer
function M.version(buf)
  return vim.lsp.util.buf_versions[buf] or 0
end

return M
