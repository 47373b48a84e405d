--- Answers `agent/saveDocuments`: writes the buffers of the given URIs, so that what a
--- command the agent runs sees on disk is what the editor shows.
local M = {}

--- Writes one buffer as `:write!` would, without autocommands (no format-on-save may
--- change what the user approved), and without asking when the file changed on disk.
---@param buf integer
---@return boolean ok
---@return string? err
function M.write(buf)
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd('silent keepalt noautocmd write!')
  end)
  return ok, (not ok) and tostring(err) or nil
end

--- The handler: `{uris}` → `{saved}`. A URI without a modified buffer counts as saved
--- (the disk already holds its text); a write that fails is left out.
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
          'Tether: cannot save ' .. vim.uri_to_fname(uri) .. ': ' .. err,
          vim.log.levels.WARN
        )
      end
    end
  end
  return { saved = saved }
end

return M
