--- Finding the buffer and window of a document URI.
local M = {}

---@param path string
---@return string
local function canonical(path)
  path = vim.fs.normalize(path)
  return vim.uv.fs_realpath(path) or path
end

--- The loaded buffer of a `file://` URI, if any.
---@param uri string
---@return integer? bufnr
function M.find(uri)
  if type(uri) ~= 'string' or not vim.startswith(uri, 'file:') then
    return nil
  end
  local wanted = canonical(vim.uri_to_fname(uri))
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= '' and vim.bo[buf].buftype == '' and canonical(name) == wanted then
        return buf
      end
    end
  end
  return nil
end

--- The buffer of `uri` when a normal (non-floating) window of the current tab page shows
--- it; the current window is preferred.
---@param uri string
---@return integer? bufnr
---@return integer? winid
function M.visible(uri)
  local buf = M.find(uri)
  if not buf then
    return nil
  end
  local current = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(current) == buf then
    return buf, current
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(win).relative == '' and vim.api.nvim_win_get_buf(win) == buf then
      return buf, win
    end
  end
  return nil
end

--- Whether a buffer holds a file the server should see (a named, normal buffer).
---@param buf integer
---@return boolean
function M.is_file(buf)
  return vim.api.nvim_buf_is_valid(buf)
    and vim.bo[buf].buftype == ''
    and vim.api.nvim_buf_get_name(buf) ~= ''
end

return M
