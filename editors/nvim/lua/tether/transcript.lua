--- The transcript: a scratch buffer that streams every run. Assistant text arrives as it
--- is generated; each tool call and its result form one fold (closed by default); the
--- outcome ends the run. How each event reads is `render.lua`'s (shared with the chat);
--- this module places it: folds, the growing line, runs taking turns.
---
--- ```
--- ▶ fix the failing test
--- ── step 1 ──
--- Let me look at the project first.
--- ✓ list_files {}                      ← a fold: the call, its approval, its output
---   README.md
--- ■ done · 2 steps · 120 in / 30 out tokens
--- ```
---
--- The model's thinking, when it thinks, is a fold too (closed: `▸ thinking (12 words)`)
--- before the text of its step.
local M = {}

local render = require('tether.render')
local style = render.styles.transcript

M.name = 'tether://transcript'

local state = {
  buf = nil, ---@type integer?
  levels = {}, ---@type string[] the fold level of each line ('>1' starts a fold, '1', '0')
  fresh = true, -- the buffer holds only its initial empty line
  writer = nil, ---@type string? the run that wrote last
  open_line = false, -- the last line is streamed text still growing
  thinking = nil, ---@type integer? the summary line of the thinking block growing at the end
}

--- 'foldexpr' of the transcript window.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  return state.levels[lnum] or '0'
end

--- 'foldtext': the first line (the tool call) and how many lines are folded.
---@return string
function M.foldtext()
  return M.fold_summary({ '  approval: ' }) -- the decision stays visible when closed
end

--- A closed fold's text: its first line (a call), the first folded line that starts with
--- one of ``notes`` (its approval), and how many lines it holds.
---@param notes string[]
---@return string
function M.fold_summary(notes)
  local first = vim.fn.getline(vim.v.foldstart)
  if vim.startswith(first, render.THINKING) then
    return first -- a thinking block: its summary says how long it is
  end
  local note = ''
  for _, line in ipairs(vim.fn.getline(vim.v.foldstart + 1, vim.v.foldend)) do
    for _, prefix in ipairs(notes) do
      if note == '' and vim.startswith(line, prefix) then
        note = '  · ' .. vim.trim(line)
      end
    end
    if note ~= '' then
      break
    end
  end
  return string.format('%s%s  [%d lines]', first, note, vim.v.foldend - vim.v.foldstart)
end

--- A window showing a transcript or a chat: its calls folded, long lines wrapped.
---@param win integer
---@param module string the module whose foldexpr and foldtext the window uses
function M.window_options(win, module)
  local options = {
    foldmethod = 'expr',
    foldexpr = "v:lua.require'" .. module .. "'.foldexpr(v:lnum)",
    foldtext = "v:lua.require'" .. module .. "'.foldtext()",
    foldlevel = 0,
    foldenable = true,
    wrap = true,
    linebreak = true,
    number = false,
    relativenumber = false,
  }
  for name, value in pairs(options) do
    vim.api.nvim_set_option_value(name, value, { scope = 'local', win = win })
  end
end

--- The transcript buffer, created on first use.
---@return integer
function M.buffer()
  if state.buf and vim.api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, M.name)
  vim.bo[buf].filetype = 'tether'
  vim.bo[buf].undolevels = -1
  vim.bo[buf].modifiable = false
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      M.window_options(vim.api.nvim_get_current_win(), 'tether.transcript')
    end,
  })
  state.buf, state.levels, state.fresh, state.writer, state.open_line = buf, {}, true, nil, false
  return buf
end

--- Shows the transcript in a split (unless a window shows it already).
---@param opts? { enter?: boolean }
---@return integer winid
function M.open(opts)
  opts = opts or {}
  local buf = M.buffer()
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    local cfg = require('tether').config.transcript
    local vertical = cfg.position == 'right' or cfg.position == 'left'
    win = vim.api.nvim_open_win(buf, opts.enter or false, {
      split = cfg.position,
      win = -1,
      width = vertical and cfg.size or nil,
      height = (not vertical) and cfg.size or nil,
    })
  elseif opts.enter then
    vim.api.nvim_set_current_win(win)
  end
  M.window_options(win, 'tether.transcript')
  return win
end

--- Changes ``buf`` (made modifiable for it, without undo history, then as it was);
--- windows whose cursor was on the last line follow the new end. The transcript's and the
--- chat's one way of writing.
---@param buf integer
---@param change fun(buf: integer)
function M.write_following(buf, change)
  local before = vim.api.nvim_buf_line_count(buf)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    following[win] = vim.api.nvim_win_get_cursor(win)[1] >= before
  end
  local modifiable, ul = vim.bo[buf].modifiable, vim.bo[buf].undolevels
  vim.bo[buf].modifiable = true
  vim.bo[buf].undolevels = -1
  change(buf)
  vim.bo[buf].undolevels = ul
  vim.bo[buf].modifiable = modifiable
  local after = vim.api.nvim_buf_line_count(buf)
  for win, follow in pairs(following) do
    if follow and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { after, 0 })
    end
  end
end

--- Changes the transcript (read-only between changes).
---@param change fun(buf: integer)
local function write(change)
  M.write_following(M.buffer(), change)
end

--- Appends lines; `fold` = 'start' opens a fold, 'inner' continues it, nil is outside.
---@param lines string[]
---@param fold? 'start'|'inner'
local function append(lines, fold)
  write(function(buf)
    local first = state.fresh and 0 or vim.api.nvim_buf_line_count(buf)
    -- levels first: Neovim evaluates 'foldexpr' of the new lines during nvim_buf_set_lines
    for i = 1, #lines do
      local level = '0'
      if fold == 'start' then
        level = i == 1 and '>1' or '1'
      elseif fold == 'inner' then
        level = '1'
      end
      state.levels[first + i] = level
    end
    vim.api.nvim_buf_set_lines(buf, first, -1, false, lines)
    state.fresh = false
  end)
  state.open_line = false
  state.thinking = nil
end

--- Adds streamed text to the growing last line (a new line when none is growing).
---@param text string
local function stream(text)
  if not state.open_line then
    append({ '' })
  end
  local parts = vim.split(text, '\n', { plain = true })
  write(function(buf)
    local last = vim.api.nvim_buf_line_count(buf)
    local line = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1]
    parts[1] = line .. parts[1]
    for i = 1, #parts do -- before the change, as in append()
      state.levels[last - 1 + i] = '0'
    end
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, parts)
  end)
  state.open_line = true
  state.thinking = nil
end

--- The model's thinking: a fold (closed) whose first line sums it up (`▸ thinking (12
--- words)`, rewritten as it grows) and whose lines hold its text, indented. A piece
--- continues the block while nothing else was written after it.
---@param piece table a `thinking` piece
local function think(piece)
  local at = state.thinking
  if piece.new or not at then
    append({ piece.line, '  ' }, 'start')
    at = vim.api.nvim_buf_line_count(M.buffer()) - 1
  else
    write(function(buf)
      vim.api.nvim_buf_set_lines(buf, at - 1, at, false, { piece.line })
    end)
  end
  local parts = vim.split(piece.text, '\n', { plain = true })
  write(function(buf)
    local last = vim.api.nvim_buf_line_count(buf)
    parts[1] = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] .. parts[1]
    for i = 1, #parts do -- before the change, as in append()
      parts[i] = i > 1 and ('  ' .. parts[i]) or parts[i]
      state.levels[last - 1 + i] = '1'
    end
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, parts)
  end)
  state.thinking = at
end

---@param run tether.Run
local function switch_to(run)
  if state.writer ~= run.id then
    state.open_line = false
    if state.writer ~= nil and run.tx.started then
      append({ '── ' .. run.id .. ' (continued) ──' })
    end
    state.writer = run.id
  end
end

---@param run tether.Run
---@param line string the prompt's line
local function header(run, line)
  append(state.fresh and { line } or { '', line })
  run.tx.started = true
end

--- Places the renderer's pieces: each call and what follows it up to the next line of
--- its own is one fold; a running command's status and then its result rewrite its
--- call's line (`✓`/`✗` for `→`).
---@param run tether.Run
---@param pieces table[]
local function place(run, pieces)
  local tx = run.tx
  tx.at = tx.at or {} -- callId → the line of its call
  for _, piece in ipairs(pieces) do
    local kind = piece.kind
    if kind == 'prompt' then
      header(run, piece.line)
    elseif kind == 'lines' or kind == 'outcome' then
      append(piece.lines)
    elseif kind == 'text' then
      stream(piece.text)
    elseif kind == 'thinking' then
      think(piece)
    elseif kind == 'end' then
      state.open_line = false
    elseif kind == 'call' then
      append({ piece.line }, 'start')
      tx.at[piece.id] = vim.api.nvim_buf_line_count(M.buffer())
    elseif kind == 'note' and piece.line then
      append({ piece.line }, 'inner')
    elseif kind == 'progress' then
      local at = tx.at[piece.id]
      if at then
        write(function(buf)
          vim.api.nvim_buf_set_lines(buf, at - 1, at, false, { piece.line })
        end)
      end
    elseif kind == 'result' then
      local at = tx.at[piece.id]
      if at then
        write(function(buf)
          vim.api.nvim_buf_set_lines(buf, at - 1, at, false, { piece.line })
        end)
      else
        append({ piece.line }, 'start')
      end
      append(piece.output, 'inner')
    end
  end
end

--- Writes one `agent/event` of a run.
---@param run tether.Run
---@param event table
function M.on_event(run, event)
  switch_to(run)
  place(run, render.event(event, run.tx, style))
end

--- Ends a run's section after its `agent/run` answer: the error, or the outcome when no
--- `run-finished` event was seen.
---@param run tether.Run
function M.finish(run)
  switch_to(run)
  if not run.tx.started then
    header(run, render.prompt_line(run.prompt))
  end
  place(run, render.finish(run, run.tx, style))
end

--- The transcript's lines (for tests and statuslines).
---@return string[]
function M.lines()
  return vim.api.nvim_buf_get_lines(M.buffer(), 0, -1, false)
end

return M
