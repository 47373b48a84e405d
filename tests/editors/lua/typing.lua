-- A user typing while an approval waits. Env: MODE, OPEN (file shown), MODIFY (JSON
-- lines: unsaved text), SETTINGS (JSON merged into the settings).
--   race:     `ggO# quick note<Esc>` then allow, in one burst (inside the didChange debounce)
--   late:     keys typed just before an (auto-approved) edit is applied
--   insert:   typing in Insert mode when the approval arrives, and after
--   keys:     `A`, `dd`, `e` in the user's buffer while an inline approval waits
--   disk:     the file changes on disk (a shell appends) before the edit is allowed
--   withdraw: nobody answers; the server withdraws the approval (approvalTimeoutSeconds)
--   switch:   the user goes to another buffer, then allows with :TetherAllow
--   close:    the user enters the float (:TetherApprove) and closes it with :q
local H = dofile(vim.env.HARNESS)
local env = vim.env
local mode = env.MODE
H.setup({ settings = vim.json.decode(env.SETTINGS or '{}') })
local approve = require('tether.approve')
local ALLOW = "<Cmd>lua require('tether.approve').decide({ decision = 'allow' })<CR>"
local DENY = "<Cmd>lua require('tether.approve').decide({ decision = 'deny' })<CR>"

local path = env.WORKSPACE .. '/' .. (env.OPEN or 'src/app.py')
vim.cmd.edit(path)
local buf = vim.api.nvim_get_current_buf()
local win = vim.api.nvim_get_current_win()
if env.MODIFY then
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.json.decode(env.MODIFY))
end
H.result.shown = {}
H.keep_notes()

--- Buffer-local Normal-mode keys of the user's buffer.
local function user_maps()
  return vim.tbl_map(function(m)
    return m.lhs
  end, vim.api.nvim_buf_get_keymap(buf, 'n'))
end

H.on('TetherApprove', function(data)
  local seen = {
    view = data.view.kind,
    mode = vim.fn.mode(),
    same_window = vim.api.nvim_get_current_win() == win,
    cursor = vim.api.nvim_win_get_cursor(win),
    user_maps = user_maps(),
  }
  table.insert(H.result.shown, seen)
  if mode == 'race' then
    H.feed('ggO# quick note<Esc>' .. ALLOW)
  elseif mode == 'insert' then
    H.input('abc def')
    H.when(function()
      return vim.endswith(vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1], 'typed: abc def')
        or vim.fn.mode() ~= 'i'
        or vim.api.nvim_get_current_win() ~= win
    end, function()
      seen.after_mode = vim.fn.mode()
      seen.after_same_window = vim.api.nvim_get_current_win() == win
      seen.after_lines = H.lines(buf)
      seen.after_pending = approve.pending() ~= nil
      H.input('<Esc>' .. DENY)
    end)
  elseif mode == 'keys' then
    H.feed('ggA  # noted<Esc>')
    seen.after_A = H.lines(buf)
    seen.pending_after_A = approve.pending() ~= nil
    H.feed('Gdd')
    seen.after_dd = H.lines(buf)
    H.feed('gg0e')
    seen.cursor_after_e = vim.api.nvim_win_get_cursor(0)
    seen.pending_after_keys = approve.pending() ~= nil
    seen.floats_after_keys = #H.floats()
    seen.maparg = {}
    for _, key in ipairs({ 'a', 'A', 'd', 'e' }) do
      seen.maparg[key] = vim.fn.maparg(key, 'n')
    end
    H.feed('u' .. DENY)
  elseif mode == 'disk' then
    vim.fn.system({ 'sh', '-c', 'echo "# appended from a shell" >> "$0"', path })
    H.feed(ALLOW)
  elseif mode == 'switch' then
    H.input(':edit README.md<CR>') -- typed: outside this autocmd (autocmds do not nest)
    H.when(function()
      return #H.floats() > 0
    end, function()
      seen.float_after_switch = #H.floats()
      seen.in_float = vim.api.nvim_win_get_config(0).relative ~= ''
      seen.statusline = require('tether').statusline()
      H.feed(':TetherAllow<CR>')
    end)
  elseif mode == 'close' then
    H.input(':TetherApprove<CR>')
    H.when(function()
      return vim.api.nvim_win_get_config(0).relative ~= ''
    end, function()
      seen.entered_float = true
      H.input(':q<CR>')
      H.when(function()
        return #H.floats() == 0
      end, function()
        seen.pending_after_close = approve.pending() ~= nil
        seen.back_in_window = vim.api.nvim_get_current_win() == win
        H.input(':TetherDeny<CR>')
      end)
    end)
  elseif mode == 'withdraw' then
    H.when(function()
      return approve.pending() == nil
    end, function()
      seen.closed_while_running = #require('tether.commands').in_flight() > 0
      seen.marks_at_close = #H.approval_marks()
      seen.floats_at_close = #H.floats()
    end)
  end
end)

if mode == 'late' then -- the user's keys land between the allow and the edit's arrival
  local edits = require('tether.edits')
  local handle = edits.handle
  local typed = false
  edits.handle = function(...)
    if not typed then
      typed = true
      H.feed('ggO# typed meanwhile<Esc>')
    end
    return handle(...)
  end
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.later(function()
    H.result.buffer_after = H.lines(buf)
    H.result.modified_after = vim.bo[buf].modified
    H.result.disk_after = vim.fn.readfile(path)
    H.result.marks_after = H.approval_marks()
    H.result.floats_after = #H.floats()
    H.result.pending_after = approve.pending() ~= nil
    H.result.user_maps_after = user_maps()
    H.finish('done')
  end, 50)
end)

local prompt = 'Tether ' .. (env.PROMPT or 'make the change')
if mode == 'insert' then -- typing started before the run: Insert mode, via the input queue
  H.input('Gotyped: ')
  H.when(function()
    return vim.fn.mode() == 'i'
      and vim.endswith(vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1], 'typed: ')
  end, function()
    vim.cmd(prompt)
  end)
else
  vim.cmd(prompt)
end
