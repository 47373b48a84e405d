--- A change of several files (a rename) shown whole for its approval: the server's unified
--- diff of every file (`agent/approve` with a `diff` preview and no `proposed` window, sent
--- because the plugin declares `changeSets`) in a scratch buffer of filetype `diff`, in a
--- split below, with one fold per file (`]]`/`[[` go to the next/previous file, `za` folds
--- one, `zM` all).
--- The title is in the window's bar, the keys in its status line; the keys are the
--- approval's own, mapped in that buffer only. The window is not entered when the approval
--- arrives (the user may be typing): `:TetherApprove` goes there.
---
--- The diff is the files' text: it comes escaped by the server and is escaped here again
--- (`render.shown`, which leaves escaped text as it is), so no control character of a file
--- acts on the screen.
local M = {}

--- Whether an approval shows a change of several files: a diff with no changed window.
---@param params table agent/approve params
---@return boolean
function M.is_change_set(params)
  local shown = type(params) == 'table' and params.preview or nil
  return type(shown) == 'table'
    and shown.kind == 'diff'
    and type(shown.diff) == 'string'
    and type(shown.proposed) ~= 'table'
end

---@class tether.DiffFile
---@field name string the file as the diff names it (`b/` side, without the prefix)
---@field first integer its first line in the diff (`--- `), 1-based
---@field last integer its last line
---@field added integer
---@field removed integer

--- The counts of a hunk header (`@@ -1,3 +1,4 @@`; a count left out is 1).
---@param line string
---@return integer? old
---@return integer? new
local function hunk_counts(line)
  local old, new = line:match('^@@ %-%d+,?(%d*) %+%d+,?(%d*) @@')
  if not old then
    return nil, nil
  end
  return tonumber(old) or 1, tonumber(new) or 1
end

--- The files of a unified diff, in order. A line is a file's header only outside a hunk
--- (the hunk's counts say where it ends), so a removed `-- x` line is never taken for one.
---@param lines string[]
---@return tether.DiffFile[]
function M.files(lines)
  local files, file = {}, nil
  local old_left, new_left = 0, 0
  local i = 1
  while i <= #lines do
    local line = lines[i]
    if old_left > 0 or new_left > 0 then
      local mark = line:sub(1, 1)
      if mark == '-' then
        old_left, file.removed = old_left - 1, file.removed + 1
      elseif mark == '+' then
        new_left, file.added = new_left - 1, file.added + 1
      elseif mark ~= '\\' then -- `\ No newline at end of file` counts for neither side
        old_left, new_left = old_left - 1, new_left - 1
      end
      file.last = i
    elseif vim.startswith(line, '--- ') and vim.startswith(lines[i + 1] or '', '+++ ') then
      local name = lines[i + 1]:sub(5):gsub('^b/', '')
      if name == '/dev/null' then
        name = line:sub(5):gsub('^a/', '')
      end
      file = { name = name, first = i, last = i + 1, added = 0, removed = 0 }
      table.insert(files, file)
      i = i + 1
    elseif file then
      local old, new = hunk_counts(line)
      if old then
        old_left, new_left = old, new
      end
      file.last = i -- a hunk header, or a line no hunk counts (kept with its file)
    end
    i = i + 1
  end
  return files
end

--- The text of a file's closed fold: `src/app.py: +2 −2 (8 lines)`.
---@return string
function M.foldtext()
  local files = vim.b.tether_diff_files or {}
  local first = vim.v.foldstart
  for _, file in ipairs(files) do
    if file.first == first then
      return string.format(
        '%s: +%d −%d (%d lines)',
        file.name,
        file.added,
        file.removed,
        vim.v.foldend - first + 1
      )
    end
  end
  return vim.fn.foldtext()
end

--- A status line or window bar showing `text` as it is (`%` is its only special character).
---@param text string
---@return string
local function literal(text)
  return (text:gsub('%%', '%%%%'))
end

--- The keys shown: the approval's, then how to move between files.
---@param hint string the approval's keys
---@return string
function M.keys(hint)
  return hint .. ' · ]]/[[ next/previous file · za fold · <CR> open the file there'
end

--- The file and line (of the new text) a line of the diff shows: a line of a hunk, its
--- header (the hunk's first line) or a file's header (its first line). Nil outside a file.
---@param files tether.DiffFile[]
---@param lines string[] the diff
---@param at integer 1-based line of the diff
---@return string? name
---@return integer? line
function M.source(files, lines, at)
  for _, file in ipairs(files) do
    if at >= file.first and at <= file.last then
      local line = 1
      for i = file.first, at do
        local start = lines[i]:match('^@@ %-%d+,?%d* %+(%d+)')
        if start then
          line = math.max(tonumber(start), 1)
        elseif i < at and i > file.first + 1 and not lines[i]:match('^[-\\]') then
          line = line + 1 -- a line the new text has, before the one asked about
        end
      end
      return file.name, line
    end
  end
  return nil, nil
end

--- `<CR>`: the file at the line under the cursor, in the window the user came from (the
--- approval keeps waiting; `:TetherApprove` comes back).
---@param files tether.DiffFile[]
---@param root string the workspace the diff's paths are in
local function open_source(files, root)
  local view_win = vim.api.nvim_get_current_win()
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local name, line = M.source(files, lines, vim.api.nvim_win_get_cursor(0)[1])
  if not name then
    return
  end
  local path = vim.fs.joinpath(root, name)
  if not vim.uv.fs_stat(path) then
    return vim.notify('Tether: ' .. name .. ' is not a file of the workspace', vim.log.levels.WARN)
  end
  vim.cmd('wincmd p')
  if vim.api.nvim_get_current_win() == view_win then
    vim.cmd('aboveleft split')
  end
  local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(path))
  if not ok then
    return vim.notify('Tether: ' .. tostring(err), vim.log.levels.WARN)
  end
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(line, last), 0 })
end

--- Moves the cursor of the current window to the next (`step` 1) or previous (-1) file's
--- header; at the last (first) file it stays.
---@param files tether.DiffFile[]
---@param step integer
local function go_file(files, step)
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local target
  for _, file in ipairs(files) do
    if step > 0 and file.first > line and not target then
      target = file.first
    elseif step < 0 and file.first < line then
      target = file.first
    end
  end
  if target then
    vim.cmd("normal! m'") -- `''` comes back
    vim.api.nvim_win_set_cursor(0, { target, 0 })
  end
end

--- Opens the change in a scratch buffer in a split below (entered only when `enter`).
---@param params table agent/approve params (a change set)
---@param hint string the approval's keys
---@param enter? boolean
---@param root? string the workspace (the diff's paths are relative to it)
---@return tether.View
function M.open(params, hint, enter, root)
  local render = require('tether.render')
  local diff = render.shown(params.preview.diff):gsub('\n$', '')
  local lines = vim.split(diff, '\n', { plain = true })
  local files = M.files(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  -- a name another buffer holds (a view kept by the user's own `bufhidden`): left unnamed
  pcall(vim.api.nvim_buf_set_name, buf, 'tether://approve/' .. tostring(params.callId))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.b[buf].tether_diff_files = files
  vim.bo[buf].filetype = 'diff'
  local most = math.max(math.floor(vim.o.lines / 2), 5)
  local win = vim.api.nvim_open_win(buf, enter == true, {
    split = 'below',
    win = -1,
    height = math.min(#lines + 1, most),
  })
  local title = render.shown(params.title or params.tool or '', true)
  vim.wo[win].winbar = ' ' .. literal('Tether: ' .. title)
  vim.wo[win].wrap = true
  vim.wo[win].foldmethod = 'manual'
  vim.wo[win].foldtext = "v:lua.require'tether.changes'.foldtext()"
  vim.wo[win].foldenable = true
  vim.api.nvim_win_call(win, function()
    for _, file in ipairs(files) do
      vim.cmd(string.format('%d,%dfold', file.first, file.last))
    end
    vim.cmd('normal! zR') -- the whole change shown; `za`, `zM` fold files away
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
  end)
  vim.keymap.set('n', '<CR>', function()
    open_source(files, root or vim.fn.getcwd())
  end, { buffer = buf, desc = 'Tether: open the file at this line' })
  for lhs, step in pairs({ [']]'] = 1, ['[['] = -1 }) do
    vim.keymap.set('n', lhs, function()
      go_file(files, step)
    end, { buffer = buf, desc = step > 0 and 'Tether: next file' or 'Tether: previous file' })
  end
  local view = { kind = 'changes', buf = buf, win = win, files = files }
  M.set_hint(view, hint)
  return view
end

--- Shows the keys in the window's status line.
---@param view tether.View
---@param hint string
function M.set_hint(view, hint)
  view.hint = M.keys(hint)
  if view.win and vim.api.nvim_win_is_valid(view.win) then
    vim.wo[view.win].statusline = ' ' .. literal(view.hint)
  end
end

--- Closes the view: its window (the buffer goes with it), or, when it is the last window,
--- the buffer alone (Neovim cannot close the last window).
---@param view tether.View
function M.close(view)
  local win = view.win
  if win and vim.api.nvim_win_is_valid(win) then
    local tab = vim.api.nvim_win_get_tabpage(win)
    if #vim.api.nvim_list_wins() > 1 or #vim.api.nvim_tabpage_list_wins(tab) > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  if vim.api.nvim_buf_is_valid(view.buf) then
    pcall(vim.api.nvim_buf_delete, view.buf, { force = true })
  end
end

return M
