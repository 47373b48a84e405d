--- The transcript: a scratch buffer that streams every run. Assistant text arrives as it
--- is generated; each tool call and its result form one fold (closed by default); the
--- outcome ends the run.
---
--- ```
--- ▶ fix the failing test
--- ── step 1 ──
--- Let me look at the project first.
--- ✓ list_files {}                      ← a fold: the call, its approval, its output
---   README.md
--- ■ done · 2 steps · 120 in / 30 out tokens
--- ```
local M = {}

M.name = 'tether://transcript'

local state = {
  buf = nil, ---@type integer?
  levels = {}, ---@type string[] the fold level of each line ('>1' starts a fold, '1', '0')
  fresh = true, -- the buffer holds only its initial empty line
  writer = nil, ---@type string? the run that wrote last
  open_line = false, -- the last line is streamed text still growing
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
end

--- The name people read for a tool-call or tool-result event: its `label` (an MCP call's
--- "notes · echo"), else the model's name for the tool. A JSON null arrives as vim.NIL.
function M.call_name(event)
  if type(event.label) == 'string' and event.label ~= '' then
    return event.label
  end
  return event.tool
end

--- JSON with sorted keys, cut to `max` characters: the arguments of a tool call.
---@param value any
---@param max integer
---@return string
function M.json(value, max)
  local function encode(v)
    if type(v) ~= 'table' then
      return vim.json.encode(v)
    end
    if next(v) == nil then
      return '{}'
    end
    if vim.islist(v) then
      return '[' .. table.concat(vim.tbl_map(encode, v), ', ') .. ']'
    end
    local keys = vim.tbl_keys(v)
    table.sort(keys)
    local items = vim.tbl_map(function(k)
      return vim.json.encode(k) .. ': ' .. encode(v[k])
    end, keys)
    return '{' .. table.concat(items, ', ') .. '}'
  end
  local text = encode(value):gsub('\n', '\\n')
  if vim.fn.strchars(text) > max then
    text = vim.fn.strcharpart(text, 0, max - 1) .. '…'
  end
  return text
end

--- How an `approval` event reads (`  approval: allow`, `  approval: auto · rule \`pytest *\`
--- (project)`); nil for a call allowed without asking for no stated reason.
---@param event table
---@return string?
function M.approval_text(event)
  local decision = event.decision or '?'
  local rules = type(event.rules) == 'table' and event.rules or {}
  local why = {}
  for _, rule in ipairs(rules) do
    local verb = rule.decision ~= 'allow' and (tostring(rule.decision) .. ' ') or ''
    local scope = type(rule.scope) == 'string' and rule.scope or 'session'
    table.insert(why, string.format('%s`%s` (%s)', verb, tostring(rule.pattern), scope))
  end
  if #why > 0 then
    local noun = #why == 1 and 'rule' or 'rules'
    return string.format('  approval: %s · %s %s', decision, noun, table.concat(why, ', '))
  end
  if decision == 'auto' then
    if type(event.sandbox) == 'string' then
      return string.format('  approval: auto · ran in the sandbox (%s)', event.sandbox)
    end
    return nil
  end
  return '  approval: ' .. decision
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

local function first_line(text)
  local line = vim.split(text or '', '\n', { plain = true })[1]
  return line ~= text and line .. ' …' or line
end

local function outcome_line(outcome, steps, usage)
  local line = string.format('■ %s · %d step%s', outcome, steps, steps == 1 and '' or 's')
  if usage then
    line = line .. string.format(' · %d in / %d out tokens', usage.inputTokens, usage.outputTokens)
    if type(usage.costUsd) == 'number' then
      line = line .. string.format(' · $%.4f', usage.costUsd)
    end
  end
  return line
end

local function header(run, prompt)
  append(state.fresh and { '▶ ' .. first_line(prompt) } or { '', '▶ ' .. first_line(prompt) })
  run.tx.started = true
end

--- Writes one `agent/event` of a run.
---@param run tether.Run
---@param event table
function M.on_event(run, event)
  local tx = run.tx
  switch_to(run)
  local kind = event.kind
  if kind == 'run-started' then
    header(run, event.prompt or run.prompt)
  elseif kind == 'step' then
    append({ string.format('── step %d ──', event.step) })
    tx.streamed = false
  elseif kind == 'text-delta' then
    stream(event.text or '')
    tx.streamed = true
  elseif kind == 'assistant' then
    if not tx.streamed and (event.text or '') ~= '' then
      stream(event.text)
    end
    state.open_line = false
  elseif kind == 'tool-call' then
    tx.calls = tx.calls or {}
    local line = string.format('→ %s %s', M.call_name(event), M.json(event.arguments or {}, 200))
    append({ line }, 'start')
    tx.calls[event.callId] = { line = vim.api.nvim_buf_line_count(M.buffer()), text = line }
  elseif kind == 'approval' then
    local text = M.approval_text(event)
    if text then
      append({ text }, 'inner')
    end
  elseif kind == 'tool-result' then
    local call = (tx.calls or {})[event.callId]
    local mark = event.ok and '✓' or '✗'
    if call then
      write(function(buf)
        local text = mark .. call.text:sub(#'→' + 1)
        vim.api.nvim_buf_set_lines(buf, call.line - 1, call.line, false, { text })
      end)
    else
      append({ mark .. ' ' .. M.call_name(event) }, 'start')
    end
    local output = (event.output or ''):gsub('\n$', '')
    output = vim.split(output, '\n', { plain = true })
    append(
      vim.tbl_map(function(l)
        return '  ' .. l
      end, output),
      'inner'
    )
  elseif kind == 'usage' then
    tx.usage = event
  elseif kind == 'compacted' then
    append({
      string.format(
        '· context compacted: %d → %d tokens',
        event.tokensBefore,
        event.tokensAfter
      ),
    })
  elseif kind == 'injection-flagged' then
    local markers = table.concat(event.markers or {}, ', ')
    append(
      { string.format('  ⚠ %s output looks like instructions: %s', event.tool, markers) },
      'inner'
    )
  elseif kind == 'run-finished' then
    append({ outcome_line(event.outcome, event.steps or 0, tx.usage) })
    tx.finished = true
  end
end

--- Ends a run's section after its `agent/run` answer: the error, or the outcome when no
--- `run-finished` event was seen.
---@param run tether.Run
function M.finish(run)
  switch_to(run)
  if not run.tx.started then
    header(run, run.prompt)
  end
  local result = run.result
  if run.error then
    append({ '✗ error: ' .. run.error })
  elseif result and not run.tx.finished then
    append({ outcome_line(result.outcome, result.steps or 0, result.usage) })
  end
  if result and result.outcome == 'error' and result.error then
    append({ '  ' .. result.error })
  end
end

--- The transcript's lines (for tests and statuslines).
---@return string[]
function M.lines()
  return vim.api.nvim_buf_get_lines(M.buffer(), 0, -1, false)
end

return M
