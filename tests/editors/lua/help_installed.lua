-- :help for each tag asked (TAGS, JSON) from an install whose doc/ cannot be written
-- (DOC_ROOT on the runtimepath, no :helptags run): the shipped doc/tags is what it reads.
local H = dofile(vim.env.HARNESS)
H.later(function()
  vim.opt.runtimepath:prepend(vim.env.DOC_ROOT)
  H.result.opened = {}
  for _, tag in ipairs(vim.json.decode(vim.env.TAGS)) do
    local ok, err = pcall(vim.cmd, 'help ' .. tag)
    table.insert(H.result.opened, {
      tag = tag,
      ok = ok,
      error = not ok and tostring(err) or vim.NIL,
      path = ok and vim.api.nvim_buf_get_name(0) or vim.NIL,
    })
    if ok then
      vim.cmd('helpclose')
    end
  end
  H.finish('done')
end)
