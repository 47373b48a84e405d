--- How an `agent/event` reads, decided once for the transcript and the chat. `event()` turns
--- one event into pieces — lines and where they belong — and the two views only place them
--- in their buffers (folds, the growing line, blank lines between blocks). A style says the
--- few ways the views differ; everything else reads the same in both.
---
--- The pieces, in order:
--- - `{ kind = 'prompt', line }` the run's prompt (`▶ …`)
--- - `{ kind = 'lines', lines }` lines of their own (`── step 2 ──`, a compaction)
--- - `{ kind = 'text', text }` streamed text: it continues the growing line
--- - `{ kind = 'end' }` the growing line is complete
--- - `{ kind = 'call', id, line }` a tool call (`→ read_file …`): its line starts a fold
--- - `{ kind = 'note', id, line?, approval? }` a line in the call's fold: its approval (no
---   line: allowed without asking, for no stated reason) or a warning
--- - `{ kind = 'progress', id, line }` the call's line while it runs (`→ bash make  ⠹ 3 s ·
---   compiling foo.c`): the time so far and the last line it printed, replaced by the next
---   progress, by the result, or by the call's own line when the run ends first
--- - `{ kind = 'result', id, line, output }` the call's line now (`✓`/`✗` for `→`) and its
---   output, as the fold's lines
--- - `{ kind = 'thinking', new, line, text }` the model's thinking (never the answer): a
---   collapsed block, its summary `line` (`▸ thinking (12 words)`) rewritten as it grows,
---   `text` (escaped) added to its folded lines; `new` starts a block
--- - `{ kind = 'outcome', lines }` how the run ended
local M = {}

---@class tether.RenderStyle
---@field prompt boolean the run's prompt as a line (the chat shows the message itself)
---@field steps boolean a `── step N ──` line at each model call
---@field arguments 'json'|'target' a call's arguments as JSON, or what it is about
---@field usage boolean tokens (and cost) on the outcome line
---@field markdown boolean notes in Markdown (a compaction in italics)

---@type table<string, tether.RenderStyle>
M.styles = {
  transcript = { prompt = true, steps = true, arguments = 'json', usage = true, markdown = false },
  chat = { prompt = false, steps = false, arguments = 'target', usage = false, markdown = true },
}

---@class tether.RenderState what the renderer remembers of one run for one view
---@field streamed? boolean the current step's text arrived as deltas
---@field usage? table the run's latest `usage` event
---@field finished? boolean its `run-finished` event was shown
---@field calls? table<string, string> callId → its line as shown
---@field running? table<string, boolean> callIds whose line shows that they run
---@field waits? table<string, boolean> ids of progress that is no call's (the MCP wait)
---@field thinking? { words: integer, in_word: boolean } the thinking block growing, if any
---@field cr? boolean the last delta ended in a carriage return, held: with the next piece's
---  line feed it is one line break, else it is shown as `\r`

local SPINNER = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

--- The name people read for a tool-call or tool-result event: its `label` (an MCP call's
--- "notes · echo"), else the model's name for the tool, escaped on one line. A JSON null
--- arrives as vim.NIL.
---@param event table
---@return string
function M.call_name(event)
  if type(event.label) == 'string' and event.label ~= '' then
    return M.shown(event.label, true)
  end
  return M.shown(tostring(event.tool), true)
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

--- What a tool call is about, in a few words: its path, command or pattern (else its
--- arguments as short JSON).
---@param arguments table
---@return string
function M.target(arguments)
  for _, key in ipairs({ 'path', 'command', 'pattern', 'query', 'url' }) do
    if type(arguments[key]) == 'string' then
      local value = vim.split(arguments[key], '\n', { plain = true })
      return value[1] .. (#value > 1 and ' …' or '')
    end
  end
  return next(arguments) and M.json(arguments, 60) or ''
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
    local pattern = M.shown(tostring(rule.pattern), true)
    table.insert(why, string.format('%s`%s` (%s)', verb, pattern, M.shown(scope, true)))
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

--- A running command's status (`⠹ 3 s · collected 3 items`): a spinner turned by the time,
--- the seconds so far and the last line it printed (the server sends it escaped).
---@param event table a `tool-progress` event
---@return string
function M.running_text(event)
  local ms = type(event.elapsedMs) == 'number' and math.max(event.elapsedMs, 0) or 0
  local frame = SPINNER[math.floor(ms / 100) % #SPINNER + 1]
  local text = string.format('%s %d s', frame, math.floor(ms / 1000))
  local last = type(event.lastLine) == 'string' and (event.lastLine:gsub('%c', ' ')) or ''
  return last ~= '' and (text .. ' · ' .. last) or text
end

--- The code point of one UTF-8 character.
---@param ch string
---@return integer
local function codepoint(ch)
  local code = ch:byte(1) % (#ch == 2 and 32 or #ch == 3 and 16 or 8)
  for i = 2, #ch do
    code = code * 64 + ch:byte(i) % 64
  end
  return code
end

--- Characters a screen does not show as themselves (`server/tether/text/display.py`): C1
--- controls, soft hyphen, invisible marks, line separators, bidi controls, zero-width and
--- tag characters.
---@param code integer
---@return boolean
local function hidden(code)
  return (code >= 0x80 and code <= 0x9f)
    or code == 0xad
    or code == 0x61c
    or code == 0x180e
    or (code >= 0x200b and code <= 0x200f)
    or (code >= 0x2028 and code <= 0x202e)
    or (code >= 0x2060 and code <= 0x206f)
    or code == 0xfeff
    or (code >= 0xfff9 and code <= 0xfffb)
    or (code >= 0xe0000 and code <= 0xe007f)
end

--- Whether the joiner between bytes `at` and `after` of `text` stands between two visible
--- characters that are not ASCII (an emoji sequence, a Persian or Indic word).
---@param text string
---@param at integer
---@param after integer
---@return boolean
local function joins(text, at, after)
  local start = at - 1
  while start > 1 and text:byte(start) >= 0x80 and text:byte(start) < 0xc0 do
    start = start - 1 -- back over the continuation bytes to the character's first
  end
  local before = text:match('^[\194-\244][\128-\191]*', start)
  local next_ = text:match('^[\194-\244][\128-\191]*', after)
  return start >= 1
    and at > 1
    and before ~= nil
    and next_ ~= nil
    and not hidden(codepoint(before))
    and not hidden(codepoint(next_))
end

--- Text from outside (the model's, a tool's, a server's) as a person may be shown it, as
--- the server's `text.display.shown(lines=True)` writes it: line breaks and tabs kept, every
--- control character, carriage return, bidi control, zero-width or tag character escaped
--- (`\x1b`, `\r`, `\u202e`), so nothing is dropped and nothing acts. A zero-width
--- joiner between two characters that are not ASCII (an emoji sequence) stays. With
--- `one_line` (a name, a title), as `shown(text)`: line breaks and tabs escaped too.
--- Escapes are printable ASCII: text shown already (the server's) comes back the same.
---@param text string
---@param one_line? boolean
---@return string
function M.shown(text, one_line)
  local named = { ['\r'] = '\\r', ['\n'] = '\\n', ['\t'] = '\\t' }
  local controls = '[%z\1-\8\11-\31\127]'
  if one_line then
    controls = '[%z\1-\31\127]'
  else
    text = text:gsub('\r\n', '\n')
  end
  text = text:gsub(controls, function(c)
    return named[c] or string.format('\\x%02x', c:byte())
  end)
  return (
    text:gsub('()([\194-\244][\128-\191]*)()', function(at, ch, after)
      local code = codepoint(ch)
      if not hidden(code) then
        return ch
      end
      if (code == 0x200c or code == 0x200d) and joins(text, at, after) then
        return ch -- joins two letters that are not ASCII
      end
      if code < 0x100 then
        return string.format('\\x%02x', code)
      elseif code < 0x10000 then
        return string.format('\\u%04x', code)
      end
      return string.format('\\U%08x', code)
    end)
  )
end

--- How a thinking block's summary line starts (the views fold from it).
M.THINKING = '▸ thinking ('

--- `▸ thinking (12 words)`: the summary of a thinking block.
---@param words integer
---@return string
function M.thinking_line(words)
  return string.format('▸ thinking (%d word%s)', words, words == 1 and '' or 's')
end

--- The lines of calls that still showed that they ran when the run ended (cancelled, timed
--- out): their own line again.
---@param st tether.RenderState
---@return table[] pieces
local function stopped(st)
  local pieces = {}
  for id in pairs(st.running or {}) do
    if (st.calls or {})[id] then
      table.insert(pieces, { kind = 'progress', id = id, line = st.calls[id] })
    end
  end
  st.running = nil
  return pieces
end

--- A run's prompt line: its first line, `…` when there is more.
---@param prompt? string
---@return string
function M.prompt_line(prompt)
  prompt = type(prompt) == 'string' and prompt or ''
  local line = vim.split(prompt, '\n', { plain = true })[1]
  return '▶ ' .. M.shown(line, true) .. (line ~= prompt and ' …' or '')
end

--- `■ done · 2 steps`, with the tokens (and cost) of `usage` when given.
---@param outcome string
---@param steps integer
---@param usage? table
---@return string
function M.outcome_line(outcome, steps, usage)
  local line = string.format('■ %s · %d step%s', outcome, steps, steps == 1 and '' or 's')
  if type(usage) == 'table' then
    line = line .. string.format(' · %d in / %d out tokens', usage.inputTokens, usage.outputTokens)
    if type(usage.costUsd) == 'number' then
      line = line .. string.format(' · $%.4f', usage.costUsd)
    end
  end
  return line
end

--- One `agent/event` as pieces (see the top of this file) in `style`; `st` is the view's
--- state of the event's run (a table the view keeps, empty at first).
---@param event table
---@param st tether.RenderState
---@param style tether.RenderStyle
---@return table[] pieces
function M.event(event, st, style)
  local kind = event.kind
  if kind ~= 'thinking' then
    st.thinking = nil -- anything else ends the thinking block: the next thinking starts one
  end
  if st.cr and kind ~= 'text-delta' and kind ~= 'tool-progress' then
    -- a carriage return held at the end of the text, and no line feed came: shown as such
    st.cr = nil
    local pieces = M.event(event, st, style)
    table.insert(pieces, 1, { kind = 'text', text = '\\r' })
    return pieces
  end
  if kind == 'run-started' then
    return style.prompt and { { kind = 'prompt', line = M.prompt_line(event.prompt) } } or {}
  elseif kind == 'step' then
    st.streamed = false
    if style.steps then
      return { { kind = 'lines', lines = { string.format('── step %d ──', event.step) } } }
    end
    return { { kind = 'end' } }
  elseif kind == 'text-delta' then
    st.streamed = true
    local text = (st.cr and '\r' or '') .. (type(event.text) == 'string' and event.text or '')
    st.cr = text:sub(-1) == '\r' or nil -- `\r\n` may be cut between two deltas: wait
    if st.cr then
      text = text:sub(1, -2)
    end
    return { { kind = 'text', text = M.shown(text) } }
  elseif kind == 'thinking' then
    local text = type(event.text) == 'string' and event.text or ''
    local new = st.thinking == nil
    local thinking = st.thinking or { words = 0, in_word = false }
    st.thinking = thinking
    for at, word in text:gmatch('()(%S+)') do -- a word cut between two pieces counts once
      if not (at == 1 and thinking.in_word) then
        thinking.words = thinking.words + 1
      end
    end
    if text ~= '' then
      thinking.in_word = text:match('%S$') ~= nil
    end
    local line = M.thinking_line(thinking.words)
    return { { kind = 'thinking', new = new, line = line, text = M.shown(text) } }
  elseif kind == 'assistant' then
    local text = type(event.text) == 'string' and vim.trim(event.text) or ''
    if not st.streamed and text ~= '' then
      return { { kind = 'text', text = M.shown(text) }, { kind = 'end' } }
    end
    return { { kind = 'end' } }
  elseif kind == 'tool-call' then
    local arguments = type(event.arguments) == 'table' and event.arguments or {}
    local about = style.arguments == 'json' and M.json(arguments, 200) or M.target(arguments)
    local line = vim.trim('→ ' .. M.call_name(event) .. ' ' .. M.shown(about, true))
    st.calls = st.calls or {}
    st.calls[event.callId] = line
    return { { kind = 'call', id = event.callId, line = line } }
  elseif kind == 'approval' then
    return { { kind = 'note', id = event.callId, line = M.approval_text(event), approval = true } }
  elseif kind == 'tool-progress' then
    local call = (st.calls or {})[event.callId]
    if not call or (st.waits or {})[event.callId] then
      -- no call of the model's (the wait for MCP servers to start): a line of its own,
      -- its last report staying
      local line = '⋯ ' .. M.running_text(event)
      local first = not call
      st.calls, st.waits = st.calls or {}, st.waits or {}
      st.calls[event.callId], st.waits[event.callId] = line, true
      return { { kind = first and 'call' or 'progress', id = event.callId, line = line } }
    end
    st.running = st.running or {}
    st.running[event.callId] = true
    return { { kind = 'progress', id = event.callId, line = call .. '  ' .. M.running_text(event) } }
  elseif kind == 'tool-result' then
    if st.running then
      st.running[event.callId] = nil
    end
    local mark = event.ok == true and '✓' or '✗'
    local call = (st.calls or {})[event.callId]
    local line = call and (mark .. call:sub(#'→' + 1)) or (mark .. ' ' .. M.call_name(event))
    local output = type(event.output) == 'string' and M.shown(event.output):gsub('\n$', '') or ''
    local lines = vim.tbl_map(function(l)
      return '  ' .. l
    end, vim.split(output, '\n', { plain = true }))
    return { { kind = 'result', id = event.callId, line = line, output = lines } }
  elseif kind == 'usage' then
    st.usage = event
    return {}
  elseif kind == 'compacted' then
    local text =
      string.format('context compacted: %d → %d tokens', event.tokensBefore, event.tokensAfter)
    text = style.markdown and ('_' .. text .. '_') or ('· ' .. text)
    return { { kind = 'lines', lines = { text } } }
  elseif kind == 'injection-flagged' then
    local markers = table.concat(type(event.markers) == 'table' and event.markers or {}, ', ')
    local line = string.format(
      '  ⚠ %s output looks like instructions: %s',
      M.shown(tostring(event.tool), true),
      M.shown(markers, true)
    )
    return { { kind = 'note', id = event.callId, line = line } }
  elseif kind == 'run-finished' then
    st.finished = true
    local line = M.outcome_line(event.outcome, event.steps or 0, style.usage and st.usage or nil)
    local pieces = stopped(st)
    table.insert(pieces, { kind = 'outcome', lines = { line } })
    return pieces
  end
  return {} -- `plan`, `retry`, kinds newer than this plugin: not shown
end

--- How a run ended, once its `agent/run` answer is in: the error of a failed request, the
--- outcome when no `run-finished` event was shown, and a failed run's error.
---@param run tether.Run
---@param st tether.RenderState
---@param style tether.RenderStyle
---@return table[] pieces
function M.finish(run, st, style)
  local result, lines = run.result, {}
  local pieces = stopped(st)
  if st.cr then -- the text's last carriage return, held for a line feed that never came
    st.cr = nil
    table.insert(pieces, 1, { kind = 'text', text = '\\r' })
  end
  if run.error then
    table.insert(lines, '✗ error: ' .. M.shown(tostring(run.error), true))
  elseif result and not st.finished then
    local usage = style.usage and result.usage or nil
    table.insert(lines, M.outcome_line(result.outcome, result.steps or 0, usage))
  end
  if result and result.outcome == 'error' and type(result.error) == 'string' then
    table.insert(lines, '✗ ' .. M.shown(result.error, true))
  end
  if #lines > 0 then
    table.insert(pieces, { kind = 'outcome', lines = lines })
  end
  return pieces
end

return M
