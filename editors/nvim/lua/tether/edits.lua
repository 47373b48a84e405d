--- `workspace/applyEdit`, as Neovim applies it, with corrections:
---
--- * pending changes are sent first and the edit is refused (`applied: false`) when a
---   document's `version` is not the buffer's version now — version 0 included, which
---   Neovim's own handler does not check (it would apply text computed on an older buffer
---   over the user's typing);
--- * the undo block of each edited buffer is closed first, so that one `u` takes back
---   exactly the agent's change (a change made from a callback joins an undo block still
---   open, e.g. while the user types in Insert mode or from the same Lua chunk);
--- * Neovim shows an empty file as one empty line (LSP text "\n"), but the server computes
---   an edit of a file that is not open against the disk (""), so text inserted into an
---   empty file would keep a stray last line: it is removed.
local M = {}

local buffers = require('tether.buffers')
local sync = require('tether.sync')

---@param uri string
---@return boolean
local function empty_on_disk(uri)
  local stat = vim.uv.fs_stat(vim.uri_to_fname(uri))
  return not stat or stat.size == 0
end

--- Why an edit of `doc` cannot be applied to its buffer now, if it cannot.
---@param doc { uri: string, version?: integer }
---@param buf integer
---@param client_id integer
---@return string? reason
local function stale(doc, buf, client_id)
  if type(doc.version) ~= 'number' or not vim.lsp.buf_is_attached(buf, client_id) then
    return nil -- no version (computed on the disk), or a buffer the server does not track
  end
  local now = sync.version(buf)
  if now ~= doc.version then
    return string.format(
      '%s changed in the editor (version %d, the edit was computed on version %d)',
      vim.fn.fnamemodify(vim.uri_to_fname(doc.uri), ':~:.'),
      now,
      doc.version
    )
  end
  return nil
end

--- The handler.
---@param err? lsp.ResponseError
---@param params lsp.ApplyWorkspaceEditParams
---@param ctx lsp.HandlerContext
---@return lsp.ApplyWorkspaceEditResult
function M.handle(err, params, ctx)
  local empty = {} ---@type string[] URIs of empty files edited without a buffer version
  local changes = params and params.edit and params.edit.documentChanges or {}
  sync.flush(ctx.client_id)
  for _, change in ipairs(changes) do
    local doc = change.textDocument
    local buf = doc and buffers.find(doc.uri)
    local reason = buf and stale(doc, buf, ctx.client_id)
    if reason then
      return { applied = false, failureReason = reason }
    end
  end
  for _, change in ipairs(changes) do
    local doc = change.textDocument
    if doc then
      local buf = buffers.find(doc.uri)
      if buf then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('let &l:undolevels = &l:undolevels')
        end)
      end
      if doc.version == nil and empty_on_disk(doc.uri) then
        table.insert(empty, doc.uri)
      end
    end
  end
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx)
  if result and result.applied then
    for _, uri in ipairs(empty) do
      local buf = buffers.find(uri)
      local count = buf and vim.api.nvim_buf_line_count(buf) or 0
      if buf and count > 1 and vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1] == '' then
        vim.api.nvim_buf_set_lines(buf, count - 1, count, false, {})
      end
    end
  end
  return result
end

return M
