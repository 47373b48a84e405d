-- A rename across two files, answered by Neovim's own basedpyright and shown whole for its
-- approval. The scripted model asks for the same rename twice in one run: the first
-- approval is denied (`d`, with a reason), the second allowed (`a`). For each approval:
-- what it showed (its view, buffer, filetype, lines, folds per file, title and keys, the
-- keys mapped there) and where the cursor was; at the first, the user enters it and goes
-- to the next file and back (`]]`, `[[`), opens a line's file (`<CR>`) and comes back
-- (`<leader>ta`) to deny; before the second one, what the buffers and
-- the disk held (the denied rename must have landed nowhere). At the end: both buffers and
-- both files, and whether anything of the approvals is left on screen.
-- Env: BASEDPYRIGHT (the `basedpyright-langserver` command).
local H = dofile(vim.env.HARNESS)
H.setup()
H.input_answers = { 'keep the old name' }
local ws = vim.env.WORKSPACE
local app_path, lib_path = ws .. '/src/app.py', ws .. '/src/lib.py'
vim.cmd.edit(lib_path)
local lib = vim.api.nvim_get_current_buf()
vim.cmd.edit(app_path)
local app = vim.api.nvim_get_current_buf()
local pyright = {
  name = 'basedpyright',
  cmd = { vim.env.BASEDPYRIGHT, '--stdio' },
  root_dir = ws,
}
vim.lsp.start(pyright, { bufnr = app })
vim.lsp.start(pyright, { bufnr = lib }) -- the same client (same name and root)
local keys = { '<leader>tad', '<leader>taa' }
H.result.shown = {}

--- The folds of a window, each `{ first, last, text }`, found by closing them all (they are
--- opened again after).
---@param win integer
---@return table[]
local function folds(win)
  local found = {}
  vim.api.nvim_win_call(win, function()
    vim.cmd('normal! zM')
    local line, last = 1, vim.api.nvim_buf_line_count(0)
    while line <= last do
      local stop = vim.fn.foldclosedend(line)
      if stop > 0 then
        table.insert(found, { line, stop, vim.fn.foldtextresult(line) })
        line = stop + 1
      else
        line = line + 1
      end
    end
    vim.cmd('normal! zR')
  end)
  return found
end

local function disk(path)
  return vim.fn.readfile(path)
end

H.on('TetherApprove', function(data)
  local view = data.view
  local seen = {
    view = view.kind,
    title = data.title,
    current_is_view = vim.api.nvim_get_current_win() == view.win,
    app = H.lines(app),
    lib = H.lines(lib),
    app_disk = disk(app_path),
    lib_disk = disk(lib_path),
  }
  if view.win and vim.api.nvim_win_is_valid(view.win) then
    seen.name = vim.api.nvim_buf_get_name(view.buf)
    seen.filetype = vim.bo[view.buf].filetype
    seen.modifiable = vim.bo[view.buf].modifiable
    seen.lines = H.lines(view.buf)
    seen.floating = vim.api.nvim_win_get_config(view.win).relative ~= ''
    seen.winbar = vim.wo[view.win].winbar
    seen.statusline = vim.wo[view.win].statusline
    seen.folds = folds(view.win)
    seen.maps = vim.tbl_map(function(m)
      return m.lhs
    end, vim.api.nvim_buf_get_keymap(view.buf, 'n'))
    table.sort(seen.maps)
  end
  table.insert(H.result.shown, seen)
  local key = table.remove(keys, 1)
  H.later(function()
    if #H.result.shown == 1 then -- the user goes there and from file to file first
      H.feed('<leader>ta')
      seen.entered = vim.api.nvim_get_current_win() == view.win
      seen.cursor = vim.api.nvim_win_get_cursor(0)[1]
      H.feed(']]')
      seen.next_file = vim.api.nvim_win_get_cursor(0)[1]
      H.feed(']]') -- the last file: it stays
      seen.past_last = vim.api.nvim_win_get_cursor(0)[1]
      H.feed('[[')
      seen.previous_file = vim.api.nvim_win_get_cursor(0)[1]
      H.feed(']]6j<CR>') -- on lib.py's `return` line: that file there, in the user's window
      seen.opened = {
        name = vim.api.nvim_buf_get_name(0),
        line = vim.api.nvim_win_get_cursor(0)[1],
        window = vim.api.nvim_get_current_win() ~= view.win,
        view_open = vim.api.nvim_win_is_valid(view.win),
      }
    end
    H.feed(key)
  end, 10)
end)

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.later(function() -- after the approval's cleanup and the save
    H.result.app_after = H.lines(app)
    H.result.lib_after = H.lines(lib)
    H.result.app_disk_after = disk(app_path)
    H.result.lib_disk_after = disk(lib_path)
    H.result.modified_after = { vim.bo[app].modified, vim.bo[lib].modified }
    H.result.pending_after = require('tether.approve').pending() ~= nil
    H.result.windows_after = vim.tbl_map(function(win)
      return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
    end, vim.api.nvim_list_wins())
    H.result.approval_buffers_after = vim.tbl_filter(function(name)
      return vim.startswith(name, 'tether://approve/')
    end, vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs()))
    H.finish('done')
  end, 50)
end)

vim.cmd('Tether rename greet')
