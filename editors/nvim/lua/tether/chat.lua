--- The chat: a Markdown buffer (`tether://chat`) holding a conversation with Tether.
---
--- The user types below the last `## You` heading and sends with `<CR>` (Normal mode) or
--- `<C-s>` (Insert mode); the answer streams under `## Tether`, each tool call as one line
--- that folds its approval and output; an approval waiting is noted on its call while its
--- view stays in the file (inline) or a float. Follow-ups continue the chat's session;
--- `:TetherChat!` opens a new chat (a new session).
---
--- ```
--- ## You
---
--- what does app.py do?
---
--- ## Tether
---
--- It greets people. I will write a note.
---
--- ✓ write_file notes/chat.txt        ← a fold: approval and output
---   approval: allow
---   created notes/chat.txt
---
--- ■ done · 2 steps
---
--- ## You
---
--- ```
---
--- The model's thinking, when it thinks, comes before the text of its step as a block
--- folded under `▸ thinking (12 words)` (closed; `zo` opens it).
local M = {}

local render = require('tether.render')
local style = render.styles.chat

M.prefix = 'tether://chat'

local YOU, TETHER = '## You', '## Tether'

---@class tether.Chat
---@field buf integer
---@field session_id? string the session follow-ups continue (nil: the next starts one)
---@field run? tether.Run the run in flight
---@field calls table<string, integer> callId → its line (1-based), for the run in flight
---@field waiting table<string, integer> callId → the line noting its approval waits
---@field pending table<integer, boolean> lines of calls whose approval waits (not folded)
---@field open_line boolean the last line is streamed text still growing
---@field thinking? integer the summary line of the thinking block growing at the end
---@field st tether.RenderState the renderer's state of the run in flight

---@type table<integer, tether.Chat> by buffer
local chats = {}
---@type integer? the chat `:TetherChat` goes to
local latest = nil
local count = 0

--- 'foldexpr' of a chat window: a tool call's line starts a fold, its indented lines
--- (approval, output) continue it; everything else is outside.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  if vim.startswith(line, render.THINKING) then
    return '>1' -- the model's thinking, its text in the fold
  elseif M.is_call_line(line) then
    local chat = chats[vim.api.nvim_get_current_buf()]
    if chat and chat.pending[lnum] then
      return '0' -- its approval waits: kept open, so what waits stays readable
    end
    return '>1'
  elseif vim.startswith(line, '  ') then
    return '='
  end
  return '0'
end

--- Whether a line is a tool call's (`→ tool …`, `✓ tool …`, `✗ tool …`).
---@param line string
---@return boolean
function M.is_call_line(line)
  for _, mark in ipairs({ '→ ', '✓ ', '✗ ' }) do
    if vim.startswith(line, mark) and line:sub(#mark + 1, #mark + 1):match('[%w_]') then
      return true
    end
  end
  return false
end

--- 'foldtext': the call, what its approval says (or that it waits), the lines folded.
---@return string
function M.foldtext()
  return require('tether.transcript').fold_summary({ '  approval: ', '  ⚠ ' })
end

---@param win integer
local function window_options(win)
  require('tether.transcript').window_options(win, 'tether.chat')
end

--- The chat of a buffer, if it is one.
---@param buf integer
---@return tether.Chat?
function M.get(buf)
  return chats[buf]
end

--- The chat `:TetherChat` goes to, if any is left.
---@return tether.Chat?
function M.current()
  return latest and chats[latest] or nil
end

---@param chat tether.Chat
---@param lines string[]
local function set_all(chat, lines)
  local buf = chat.buf
  local ul = vim.bo[buf].undolevels
  vim.bo[buf].undolevels = -1 -- Tether's writes are not the user's to undo
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].undolevels = ul
end

local function keys_hint()
  return '<CR> sends (Normal mode) · <C-s> sends (Insert mode) · /<C-x><C-o> the session '
    .. 'commands · :TetherChat! a new session'
end

--- A new chat buffer, with its keys.
---@return tether.Chat
local function create()
  count = count + 1
  local buf = vim.api.nvim_create_buf(true, false)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_name(buf, count == 1 and M.prefix or (M.prefix .. '-' .. count))
  ---@type tether.Chat
  local chat = { buf = buf, calls = {}, waiting = {}, pending = {}, open_line = false, st = {} }
  chats[buf] = chat
  set_all(chat, { '# Tether chat', '', keys_hint(), '', YOU, '' })
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].omnifunc = "v:lua.require'tether.chat'.complete"
  vim.keymap.set('n', '<CR>', function()
    M.send(buf)
  end, { buffer = buf, desc = 'Tether: send the message below the last ## You' })
  vim.keymap.set('i', '<C-s>', function()
    M.send(buf)
  end, { buffer = buf, desc = 'Tether: send the message below the last ## You' })
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      window_options(vim.api.nvim_get_current_win())
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      chats[buf] = nil
      if latest == buf then
        latest = nil
      end
    end,
  })
  return chat
end

--- `:TetherChat[!]`: goes to the chat (opened in a split when no window shows it); with
--- `new`, a new chat, whose first message starts a new session.
---@param opts? { new?: boolean }
---@return tether.Chat
function M.open(opts)
  opts = opts or {}
  local chat = (not opts.new) and M.current() or nil
  if not chat then
    chat = create()
    latest = chat.buf
  end
  local win = vim.fn.bufwinid(chat.buf)
  if win == -1 then
    local cfg = require('tether').config.chat or { position = 'right', size = 80 }
    local vertical = cfg.position == 'right' or cfg.position == 'left'
    win = vim.api.nvim_open_win(chat.buf, true, {
      split = cfg.position,
      win = -1,
      width = vertical and cfg.size or nil,
      height = (not vertical) and cfg.size or nil,
    })
  else
    vim.api.nvim_set_current_win(win)
  end
  window_options(win)
  local last = vim.api.nvim_buf_line_count(chat.buf)
  vim.api.nvim_win_set_cursor(win, { last, 0 })
  return chat
end

--- Changes the chat's text; windows whose cursor was on the last line follow the end.
---@param chat tether.Chat
---@param change fun(buf: integer)
local function write(chat, change)
  if vim.api.nvim_buf_is_valid(chat.buf) then
    require('tether.transcript').write_following(chat.buf, change)
  end
end

---@param chat tether.Chat
---@param lines string[]
local function append(chat, lines)
  write(chat, function(buf)
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
  end)
  chat.open_line = false
  chat.thinking = nil
end

---@param chat tether.Chat
---@return string
local function last_line(chat)
  return vim.api.nvim_buf_get_lines(chat.buf, -2, -1, false)[1] or ''
end

--- Starts a new block of text (answer, tool calls, outcome) after a blank line; calls
--- follow calls, and the outcome's lines follow the outcome, without one.
---@param chat tether.Chat
---@param lines string[]
---@param kind 'text'|'call'|'outcome'
local function block(chat, lines, kind)
  local last = last_line(chat)
  local glued = kind == 'call'
      and not chat.thinking -- the thinking block stands apart
      and (M.is_call_line(last) or vim.startswith(last, '  '))
    or kind == 'outcome' and vim.startswith(last, '■ ')
  if last ~= '' and not glued then
    table.insert(lines, 1, '')
  end
  append(chat, lines)
end

---@param chat tether.Chat
---@param text string
local function stream(chat, text)
  if not chat.open_line then
    block(chat, { '' }, 'text')
  end
  local parts = vim.split(text, '\n', { plain = true })
  write(chat, function(buf)
    local last = vim.api.nvim_buf_line_count(buf)
    parts[1] = (vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or '') .. parts[1]
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, parts)
  end)
  chat.open_line = true
  chat.thinking = nil
end

--- The model's thinking: a block of its own, folded (closed) under its summary line
--- (`▸ thinking (12 words)`, rewritten as it grows), its text indented in the fold. A
--- piece continues the block while nothing else was written after it.
---@param chat tether.Chat
---@param piece table a `thinking` piece
local function think(chat, piece)
  local at = chat.thinking
  if piece.new or not at then
    block(chat, { piece.line, '  ' }, 'text')
    at = vim.api.nvim_buf_line_count(chat.buf) - 1
  else
    write(chat, function(buf)
      vim.api.nvim_buf_set_lines(buf, at - 1, at, false, { piece.line })
    end)
  end
  local parts = vim.split(piece.text, '\n', { plain = true })
  write(chat, function(buf)
    local last = vim.api.nvim_buf_line_count(buf)
    parts[1] = (vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or '') .. parts[1]
    for i = 2, #parts do
      parts[i] = '  ' .. parts[i]
    end
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, parts)
  end)
  chat.thinking = at
end

--- The message below the last `## You`: its first and last line (1-based) and its text.
---@param buf integer
---@return integer? heading the heading's line
---@return string text
local function message(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i = #lines, 1, -1 do
    if lines[i]:match('^## You%s*$') then
      return i, vim.trim(table.concat(vim.list_slice(lines, i + 1), '\n'))
    end
  end
  return nil, ''
end

local function notify(text, level)
  vim.notify('Tether: ' .. text, level or vim.log.levels.INFO)
end

---@type table<integer, table[]> client id → the server's session commands
local listed = {}

--- The server's session commands (`agent/commands`, asked once per server): the ones the
--- terminal chat and ACP clients offer too.
---@param client vim.lsp.Client
---@return table[] commands `{ name, description, argument? }`
local function session_commands(client)
  if not listed[client.id] then
    local answer ---@type table?
    if vim.fn.has('nvim-0.11') == 1 then
      answer = client:request_sync('agent/commands', {}, 3000, 0)
    else
      answer = client.request_sync('agent/commands', {}, 5000, 0)
    end
    local result = answer and not answer.err and answer.result or nil
    if not result then
      return {}
    end
    listed[client.id] = result.commands or {}
  end
  return listed[client.id]
end

--- What the chat offers: the server's session commands, then the chat's own
--- (`tether.chat_commands`: `/resume`, `/rules`) that the server does not list.
---@param client vim.lsp.Client
---@return table[] commands `{ name, description, argument? }`
local function offered(client)
  local all, names = {}, {}
  for _, command in ipairs(session_commands(client)) do
    table.insert(all, command)
    names[command.name] = true
  end
  for _, own in ipairs(require('tether.chat_commands').list) do
    if not names[own.name] then
      table.insert(all, own)
    end
  end
  return all
end

--- The chat's server, started if it is not yet (nil and why when it cannot be).
---@param buf integer the chat
---@return vim.lsp.Client? client
---@return string? err
local function server_of(buf)
  return require('tether').ensure_client(require('tether.context').last_file() or buf)
end

--- 'omnifunc' of a chat (`<C-x><C-o>`): `/` completes the server's session commands.
---@param findstart integer
---@param base string
---@return integer|table
function M.complete(findstart, base)
  if findstart == 1 then
    local before = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
    local start = before:find('^/%w*$')
    return start and 0 or -3 -- a command is the message's first word
  end
  local client = server_of(vim.api.nvim_get_current_buf())
  local items = {}
  for _, command in ipairs(client and offered(client) or {}) do
    local word = '/' .. command.name
    if vim.startswith(word, base) then
      local shown = command.argument and (word .. ' ' .. command.argument) or word
      table.insert(items, { word = word, abbr = shown, menu = command.description })
    end
  end
  return items
end

--- A message `/name [argument]` naming a session command: runs it in the chat's session —
--- the server's through `agent/command`, the chat's own (`tether.chat_commands`) here —
--- and writes what it said under `## Tether`.
---@param chat tether.Chat
---@param text string
---@return boolean handled
local function run_command(chat, text)
  local name, argument = text:match('^/([%w_-]+)%s*(.-)%s*$')
  local client = name and server_of(chat.buf)
  if not client then
    return false
  end
  local known = false
  for _, command in ipairs(session_commands(client)) do
    known = known or command.name == name
  end
  local own = require('tether.chat_commands')
  if not known and not own.has(name) then
    return false -- not a command: the model reads it
  end
  ---@param lines string[]
  ---@param session_id? string|false the session to go on with; false: a new one
  local function done(lines, session_id)
    vim.schedule(function()
      if not vim.api.nvim_buf_is_valid(chat.buf) then
        return
      end
      vim.bo[chat.buf].modifiable = true
      block(chat, lines, 'text')
      if session_id == false then
        chat.session_id = nil -- the next message starts a new session
      elseif session_id then
        chat.session_id = session_id
      end
      M.prompt_again(chat)
    end)
  end
  if not known then
    own.run(client, chat, name, argument, done)
    return true
  end
  local params = { name = name, sessionId = chat.session_id }
  if argument ~= '' then
    params.argument = argument
  end
  require('tether.client').request(client, 'agent/command', params, function(err, result)
    local said = err and ('/' .. name .. ': ' .. (err.message or 'failed')) or result.message
    done(vim.split(said, '\n', { plain = true }), (result and result.newSession) and false or nil)
  end)
  return true
end

--- `<CR>` / `<C-s>`: sends the message below the last `## You` in the chat's session.
---@param buf integer
function M.send(buf)
  local chat = chats[buf]
  if not chat then
    return
  end
  if chat.run and not chat.run.done then
    return notify('Tether is still answering: wait, or :TetherCancel', vim.log.levels.WARN)
  end
  local heading, text = message(buf)
  if not heading or text == '' then
    return notify('type your message below the last "## You", then <CR>', vim.log.levels.WARN)
  end
  if vim.fn.mode() ~= 'n' then
    vim.cmd.stopinsert()
  end
  local lines = vim.split(text, '\n', { plain = true })
  local tidy = { YOU, '' }
  vim.list_extend(tidy, lines)
  vim.list_extend(tidy, { '', TETHER })
  write(chat, function(b)
    vim.api.nvim_buf_set_lines(b, heading - 1, -1, false, tidy)
  end)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
  chat.calls, chat.waiting, chat.pending, chat.st = {}, {}, {}, {}
  chat.thinking = nil
  chat.open_line = false
  vim.bo[buf].modifiable = false -- until the answer is in: nothing typed gets lost in it
  if text:sub(1, 1) == '/' and run_command(chat, text) then
    return
  end
  local from = require('tether.context').last_file() or buf
  local id = require('tether.commands').run(text, {
    bufnr = from,
    session_id = chat.session_id,
    chat = chat,
  })
  if not id then -- not sent (no server; it said why): the message waits to be sent again
    vim.bo[buf].modifiable = true
    write(chat, function(b)
      local back = { YOU, '' }
      vim.list_extend(back, lines)
      vim.api.nvim_buf_set_lines(b, heading - 1, -1, false, back)
    end)
  end
end

--- A fresh `## You` at the end, ready for the next message.
---@param chat tether.Chat
function M.prompt_again(chat)
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  vim.bo[chat.buf].modifiable = true
  block(chat, { YOU, '' }, 'text')
end

--- The line a call's approval or result is written after: the fold's last line.
---@param chat tether.Chat
---@param line integer
---@return integer
local function fold_end(chat, line)
  local lines = vim.api.nvim_buf_get_lines(chat.buf, line, -1, false)
  local stop = line
  for _, l in ipairs(lines) do
    if not vim.startswith(l, '  ') then
      break
    end
    stop = stop + 1
  end
  return stop
end

--- Inserts indented lines at the end of a call's fold (or the end of the chat).
---@param chat tether.Chat
---@param call_id string
---@param lines string[]
---@return integer first the first inserted line (1-based)
local function into_call(chat, call_id, lines)
  local line = chat.calls[call_id]
  if not line then
    append(chat, lines)
    return vim.api.nvim_buf_line_count(chat.buf) - #lines + 1
  end
  local at = fold_end(chat, line)
  write(chat, function(buf)
    vim.api.nvim_buf_set_lines(buf, at, at, false, lines)
  end)
  chat.thinking = nil
  local shift = #lines
  for id, l in pairs(chat.calls) do
    if l > at then
      chat.calls[id] = l + shift
    end
  end
  for id, l in pairs(chat.waiting) do
    if l > at then
      chat.waiting[id] = l + shift
    end
  end
  chat.open_line = false
  return at + 1
end

--- Marks a call's approval as waiting (its block unfolded) or not (folded again), and
--- rewrites its line so Neovim evaluates the line's fold level again.
---@param chat tether.Chat
---@param call_id string
---@param waits boolean
local function set_pending(chat, call_id, waits)
  local line = chat.calls[call_id]
  if not line then
    return
  end
  chat.pending = {}
  for id, l in pairs(chat.waiting) do
    if id ~= call_id and chat.calls[id] then
      chat.pending[chat.calls[id]] = true
    end
  end
  chat.pending[line] = waits or nil
  write(chat, function(buf)
    local text = vim.api.nvim_buf_get_lines(buf, line - 1, line, false)
    vim.api.nvim_buf_set_lines(buf, line - 1, line, false, text)
  end)
end

--- An approval of one of the chat's runs is shown: noted on its call, with where it is
--- and how to decide it.
---@param data table { runId, callId, title, view }
function M.on_approve(data)
  local run = data.runId and require('tether.commands').get_run(data.runId)
  local chat = run and run.chat
  if not chat or not chats[chat.buf] then
    return
  end
  local where = data.view
      and data.view.kind == 'inline'
      and ('inline in ' .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(data.view.buf), ':~:.'))
    or (data.view and data.view.kind == 'changes' and 'in the diff below')
    or 'in a float'
  local hint = require('tether.approve').go_hint()
  local note = string.format('  ⚠ waiting for your approval (%s; %s)', where, hint)
  local shown = chat.waiting[data.callId]
  if shown then -- shown again (e.g. after an edit buffer was closed unsaved)
    write(chat, function(buf)
      vim.api.nvim_buf_set_lines(buf, shown - 1, shown, false, { note })
    end)
  else
    chat.waiting[data.callId] = into_call(chat, data.callId, { note })
  end
  set_pending(chat, data.callId, true)
end

--- An approval was decided: its note replaces the one saying it waits (or is removed,
--- for a call allowed without asking for no stated reason), else joins the call's fold.
---@param chat tether.Chat
---@param call_id string
---@param text? string
local function decided(chat, call_id, text)
  local waiting = chat.waiting[call_id]
  chat.waiting[call_id] = nil
  if waiting then
    set_pending(chat, call_id, false)
    write(chat, function(buf)
      vim.api.nvim_buf_set_lines(buf, waiting - 1, waiting, false, text and { text } or {})
    end)
    if not text then
      for id, l in pairs(chat.calls) do
        chat.calls[id] = l > waiting and l - 1 or l
      end
    end
  elseif text then
    into_call(chat, call_id, { text })
  end
end

--- Places the renderer's pieces: blocks separated by blank lines, a call's approval and
--- output in its fold (closed unless its approval waits).
---@param chat tether.Chat
---@param pieces table[]
local function place(chat, pieces)
  for _, piece in ipairs(pieces) do
    local kind = piece.kind
    if kind == 'lines' then
      block(chat, piece.lines, 'text')
    elseif kind == 'outcome' then
      block(chat, piece.lines, 'outcome')
    elseif kind == 'text' then
      stream(chat, piece.text)
    elseif kind == 'thinking' then
      think(chat, piece)
    elseif kind == 'end' then
      chat.open_line = false
    elseif kind == 'call' then
      block(chat, { piece.line }, 'call')
      chat.calls[piece.id] = vim.api.nvim_buf_line_count(chat.buf)
    elseif kind == 'note' and piece.approval then
      decided(chat, piece.id, piece.line)
    elseif kind == 'note' then
      into_call(chat, piece.id, { piece.line })
    elseif kind == 'progress' then -- a running command's status, on its call's line
      local line = chat.calls[piece.id]
      if line then
        write(chat, function(buf)
          vim.api.nvim_buf_set_lines(buf, line - 1, line, false, { piece.line })
        end)
      end
    elseif kind == 'result' then
      local line = chat.calls[piece.id]
      if line then
        write(chat, function(buf)
          vim.api.nvim_buf_set_lines(buf, line - 1, line, false, { piece.line })
        end)
      else
        block(chat, { piece.line }, 'call')
        chat.calls[piece.id] = vim.api.nvim_buf_line_count(chat.buf)
      end
      into_call(chat, piece.id, piece.output)
    end
  end
end

--- Writes one `agent/event` of one of the chat's runs.
---@param run tether.Run
---@param event table
function M.on_event(run, event)
  local chat = run.chat
  if not chat or not chats[chat.buf] then
    return
  end
  if event.kind == 'run-started' then
    chat.session_id = event.sessionId or chat.session_id
  end
  place(chat, render.event(event, chat.st, style))
end

--- The chat's run ended (its `agent/run` answer): the outcome, then a fresh `## You`.
---@param run tether.Run
function M.finish(run)
  local chat = run.chat
  if not chat or not chats[chat.buf] then
    return
  end
  if run.result and run.result.sessionId then
    chat.session_id = run.result.sessionId
  end
  place(chat, render.finish(run, chat.st, style))
  M.prompt_again(chat)
end

return M
