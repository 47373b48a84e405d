--- Answers `agent/saveDocuments`: writes the buffers of the given URIs, so that what a
--- command the agent runs sees on disk is what the editor shows.
---
--- A file that changed on disk since its buffer read (or last wrote) it is never
--- overwritten: it is left out of `saved` (the server tells the model) and the user is told
--- to reload (`:edit`) or keep their text (`:write!`). Allowing an edit saves the whole
--- buffer, the user's unsaved typing included: the command the agent runs next must see the
--- text the editor shows.
local M = {}

--- What the disk held when a buffer last read or wrote its file.
---@param buf integer
---@return table? stat { size, sec, nsec } or { missing = true }
local function disk_state(buf)
  local stat = vim.uv.fs_stat(vim.api.nvim_buf_get_name(buf))
  if not stat then
    return { missing = true }
  end
  return { size = stat.size, sec = stat.mtime.sec, nsec = stat.mtime.nsec }
end

--- Records what the disk holds now as what the buffer was read from (BufReadPost,
--- BufWritePost, FileChangedShellPost; and once for buffers loaded before setup()).
---@param buf integer
---@param force? boolean also when a record exists
function M.remember(buf, force)
  if not require('tether.buffers').is_file(buf) then
    return
  end
  if force or vim.b[buf].tether_disk == nil then
    vim.b[buf].tether_disk = disk_state(buf)
  end
end

--- Why the file of a buffer must not be overwritten, if it must not.
---@param buf integer
---@return string? reason
function M.changed_on_disk(buf)
  local seen = vim.b[buf].tether_disk
  if seen == nil then
    return nil -- never recorded: as Neovim itself, trust the buffer
  end
  local now = disk_state(buf)
  if vim.deep_equal(seen, now) then
    return nil
  end
  return now.missing and 'the file was deleted on disk since it was read'
    or 'the file changed on disk since it was read'
end

--- Writes one buffer as `:write!` would, without autocommands (no format-on-save may
--- change what the user approved), unless its file changed on disk since it was read.
---@param buf integer
---@return boolean ok
---@return string? err
function M.write(buf)
  local reason = M.changed_on_disk(buf)
  if reason then
    return false, reason .. ' (reload it with :edit, or keep your text with :write!)'
  end
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd('silent keepalt noautocmd write!')
  end)
  if ok then
    M.remember(buf, true) -- noautocmd: BufWritePost did not record it
  end
  return ok, (not ok) and tostring(err) or nil
end

--- The handler: `{uris}` → `{saved}`. A URI without a modified buffer counts as saved
--- (the disk already holds its text); a write that fails or is refused is left out.
---@param params { uris: string[] }
---@return { saved: string[] }
function M.handle(_, params, _)
  local saved = {}
  for _, uri in ipairs(type(params) == 'table' and params.uris or {}) do
    local buf = require('tether.buffers').find(uri)
    if not buf or not vim.bo[buf].modified then
      table.insert(saved, uri)
    else
      local ok, err = M.write(buf)
      if ok then
        table.insert(saved, uri)
      else
        vim.notify(
          'Tether: did not save ' .. vim.uri_to_fname(uri) .. ': ' .. err,
          vim.log.levels.WARN
        )
      end
    end
  end
  return { saved = saved }
end

return M
