-- :helptags on a copy of doc/ (DOC_ROOT/doc), then :help for each tag asked (TAGS, JSON).
local H = dofile(vim.env.HARNESS)
H.later(function()
  vim.cmd('helptags ' .. vim.fn.fnameescape(vim.env.DOC_ROOT .. '/doc'))
  vim.opt.runtimepath:prepend(vim.env.DOC_ROOT)
  H.result.tags = vim.fn.readfile(vim.env.DOC_ROOT .. '/doc/tags')
  H.result.opened = {}
  for _, tag in ipairs(vim.json.decode(vim.env.TAGS)) do
    vim.cmd('help ' .. tag)
    table.insert(H.result.opened, {
      tag = tag,
      file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t'),
      line = vim.api.nvim_get_current_line(),
    })
    vim.cmd('helpclose')
  end
  H.finish('done')
end)
