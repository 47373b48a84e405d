--- Answers `agent/approve`: shows the proposed call and waits for the user's keys.
---
--- Neovim runs the handler of a server-to-client request inside a coroutine (0.11:
--- `vim.lsp.rpc` wraps it in `coroutine.wrap` and sends the handler's return value as the
--- response). The handler shows the call, then yields; the key that decides resumes the
--- coroutine with the answer, and Neovim sends it. The editor never blocks meanwhile.
--- Where the handler is not in a coroutine, a blocking `confirm()` dialog answers.
local M = {}

local preview = require('tether.preview')

---@class tether.Approval
---@field params table the agent/approve params
---@field callback fun(answer: table)
---@field view? tether.View
---@field prev_win? integer the window the user left for the float
---@field float? tether.View the float (its buffer holds the decision keys)
---@field client_id? integer
---@field request_id? integer|string the id of the agent/approve request, when known
---@field edit_buf? integer the edit-before-allow buffer
---@field choices? table<integer, boolean> per hunk: accepted (true) or rejected (false)
---@field hunk? integer the hunk `h`, `y` and `n` act on (1-based)

---@type tether.Approval[]
local queue = {}
---@type tether.Approval?
local current = nil

--- What edit-before-allow lets the user change: a command, or the new text of an edit's
--- changed window (`proposed`; the server turns it back into the call). Nil: nothing.
---@param params table
---@return string? text
---@return 'command'|'proposed'|nil field
local function editable(params)
  local shown = params.preview or {}
  if shown.kind == 'command' and type(shown.command) == 'string' then
    return shown.command, 'command'
  elseif shown.kind == 'diff' and type(shown.proposed) == 'table' then
    return shown.proposed.text, 'proposed'
  end
  return nil, nil
end

local function keys()
  return require('tether').config.approve_keys
end

--- Whether a pattern is the command shown, word for word.
---@param pattern string
---@param shown table the preview
---@return boolean
local function is_exact_command(pattern, shown)
  return table.concat(vim.split(vim.trim(shown.command), '%s+'), ' ') == pattern
end

--- The rules the server offers for "allow always" (`suggestedPatterns`, narrowest first,
--- each one it would store for this call): `exact` for `A` (the command word for word, or
--- the file), `wide` for `r` (`pytest *`, `src/*.py`). The plugin computes none itself:
--- without them `A` is a bare `allow-always` and `r` offers nothing to accept.
---@param params table agent/approve params
---@return string? exact
---@return string? wide
local function offered(params)
  local list = type(params.suggestedPatterns) == 'table' and params.suggestedPatterns or {}
  local patterns = vim.tbl_filter(function(p)
    return type(p) == 'string' and p:match('%S') ~= nil
  end, list)
  local shown = type(params.preview) == 'table' and params.preview or {}
  local exact = patterns[1]
  if exact and shown.kind == 'command' then -- `git commit *` alone: no exact one offered
    exact = type(shown.command) == 'string' and is_exact_command(exact, shown) and exact or nil
  end
  local wide = patterns[#patterns]
  return exact, wide ~= exact and wide or nil
end

--- What `A` says it allows always.
---@param params table
---@return string
local function always_label(params)
  if type(params.preview) == 'table' and params.preview.kind == 'command' then
    return ' always (this exact command)'
  end
  if require('tether.changes').is_change_set(params) then -- the session allows the tool
    local tool = require('tether.render').shown(params.tool or '?', true)
    return string.format(' always (every %s)', tool)
  end
  local exact = offered(params)
  return exact and string.format(' always `%s`', exact) or ' always (every file)'
end

---@param req tether.Approval
---@return string
local function hint(req)
  local params = req.params
  local k = keys()
  local parts = { k.allow .. ' allow', k.allow_always .. always_label(params) }
  local _, wide = offered(params)
  if wide and k.allow_rule then
    table.insert(parts, string.format('%s always `%s`', k.allow_rule, wide))
  end
  table.insert(parts, k.deny .. ' deny')
  if editable(params) then
    table.insert(parts, k.edit .. ' edit')
  end
  table.insert(parts, 'q deny')
  local shown = type(params.preview) == 'table' and params.preview or {}
  local hunks = shown.kind == 'diff' and require('tether.hunks').of(shown.proposed) or {}
  if #hunks > 1 then
    -- the current change, here too: its label after its line can be cut by the edge
    table.insert(parts, string.format('change %d of %d', req.hunk or 1, #hunks))
    table.insert(
      parts,
      string.format(
        '%s next change · %s accept · %s reject',
        k.next_hunk,
        k.accept_hunk,
        k.reject_hunk
      )
    )
    local decided, accepted = 0, 0
    for i = 1, #hunks do
      local choice = (req.choices or {})[i]
      decided = decided + (choice ~= nil and 1 or 0)
      accepted = accepted + (choice and 1 or 0)
    end
    if decided > 0 then
      table.insert(parts, string.format('%d of %d accepted', accepted, #hunks))
    end
  end
  return table.concat(parts, ' · ')
end

--- What an approval says where its keys do not work (the user's buffer, a notification).
---@return string
function M.go_hint()
  local key = require('tether').config.keymaps
  key = key and key.approve
  return key and (key .. ' or :TetherApprove to decide') or ':TetherApprove to decide'
end

local ACTIONS = {
  allow = function()
    M.decide({ decision = 'allow' })
  end,
  allow_always = function()
    M.allow_always()
  end,
  allow_rule = function()
    M.allow_rule()
  end,
  deny = function()
    M.deny()
  end,
  edit = function()
    M.edit()
  end,
}

--- Marks the float's hunks: the one `y`/`n` act on, and what was chosen for each; the
--- keys shown count the accepted ones.
---@param req tether.Approval
local function draw_hunks(req)
  local float = req.float
  if not (float and float.hunks and vim.api.nvim_buf_is_valid(float.buf)) then
    return
  end
  vim.api.nvim_buf_clear_namespace(float.buf, preview.hunk_ns, 0, -1)
  local total = #float.hunks
  for i, at in ipairs(float.where) do
    local choice = req.choices[i]
    local label, hl = string.format('  ◀ change %d of %d', i, total), 'TetherHint'
    if choice == true then
      label, hl = string.format('  ✓ change %d accepted', i), 'TetherAccepted'
    elseif choice == false then
      label, hl = string.format('  ✗ change %d rejected', i), 'TetherRejected'
    end
    if i == req.hunk and choice ~= nil then
      label = '  ◀' .. label:sub(3)
    end
    if i == req.hunk or choice ~= nil then
      vim.api.nvim_buf_set_extmark(float.buf, preview.hunk_ns, at[1] - 1, 0, {
        virt_text = { { label, hl } },
        virt_text_pos = 'eol',
      })
    end
    if i == req.hunk then
      vim.api.nvim_buf_set_extmark(float.buf, preview.hunk_ns, at[1] - 1, 0, {
        end_row = at[2],
        hl_group = 'TetherHunk',
        hl_eol = true,
      })
    end
  end
  if vim.api.nvim_win_is_valid(float.win) then
    preview.set_hint(float, hint(req))
    local at = float.where[req.hunk]
    vim.api.nvim_win_set_cursor(float.win, { at[1], 0 })
  end
end

--- `h`: the next change of the edit (after the last, the first).
function M.next_hunk()
  local req = current
  if not (req and req.float and req.float.hunks) then
    return
  end
  req.hunk = req.hunk % #req.float.hunks + 1
  draw_hunks(req)
end

--- `y` / `n`: accepts or rejects the current change, then goes to the next one not decided;
--- once every change is decided, the answer goes: all accepted an allow, none a deny, else
--- an allow with the window made of the accepted changes (`editedText`; the model is told
--- the user changed the call).
---@param accept boolean
function M.choose_hunk(accept)
  local req = current
  if not (req and req.float and req.float.hunks) then
    return
  end
  local hunks = req.float.hunks
  req.choices[req.hunk] = accept
  if not accept and req.view and req.view.kind == 'inline' then
    preview.drop_change(req.view, req.hunk) -- the file shows what it will keep
  end
  for step = 1, #hunks do
    local i = (req.hunk + step - 1) % #hunks + 1
    if req.choices[i] == nil then
      req.hunk = i
      return draw_hunks(req)
    end
  end
  local accepted = {}
  for i = 1, #hunks do
    accepted[i] = req.choices[i] == true
  end
  local base = req.params.preview.proposed.baseText or ''
  M.decide(require('tether.hunks').verdict(base, hunks, accepted))
end

--- The decision keys, in the approval's own float only (never in the user's buffer).
---@param buf integer the float's buffer
local function map_keys(buf)
  for action, fn in pairs(ACTIONS) do
    local opts = { buffer = buf, nowait = true, desc = 'Tether: ' .. action }
    if keys()[action] then
      vim.keymap.set('n', keys()[action], fn, opts)
    end
  end
  vim.keymap.set('n', 'q', function()
    M.decide({ decision = 'deny' })
  end, { buffer = buf, nowait = true, desc = 'Tether: deny' })
end

--- The keys of an edit's changes (`h`, `y`, `n`), in its float.
---@param buf integer
local function map_hunk_keys(buf)
  local k = keys()
  local maps = {
    { k.next_hunk, M.next_hunk, 'next change' },
    {
      k.accept_hunk,
      function()
        M.choose_hunk(true)
      end,
      'accept this change',
    },
    {
      k.reject_hunk,
      function()
        M.choose_hunk(false)
      end,
      'reject this change',
    },
  }
  for _, map in ipairs(maps) do
    if map[1] then
      vim.keymap.set(
        'n',
        map[1],
        map[2],
        { buffer = buf, nowait = true, desc = 'Tether: ' .. map[3] }
      )
    end
  end
end

--- Removes the marks and the float of a request (it may be shown again).
---@param req tether.Approval
local function hide(req)
  local view, float = req.view, req.float
  req.view, req.float = nil, nil
  if float then
    preview.close(float)
  end
  if view and view ~= float then
    preview.close(view)
  end
end

--- Opens the float of a request: entered only when the user asked for it (`enter`).
---@param req tether.Approval
---@param enter boolean
---@return tether.View
local function open_float(req, enter)
  req.choices = req.choices or {}
  req.hunk = req.hunk or 1
  local float
  if require('tether.changes').is_change_set(req.params) then -- several files: shown whole
    local client = req.client_id and vim.lsp.get_client_by_id(req.client_id)
    local root = client and client.root_dir or nil
    float = require('tether.changes').open(req.params, hint(req), enter, root)
  else
    float = preview.float(req.params, hint(req), enter)
  end
  req.float = float
  map_keys(float.buf)
  if float.hunks then
    map_hunk_keys(float.buf)
    draw_hunks(req)
  end
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(float.win),
    once = true,
    callback = function()
      if req.float == float then -- closed by the user (`:q`, `<C-w>c`): the float is gone
        req.float = nil
        if req.view == float then
          req.view = nil
        end
      end
    end,
  })
  return float
end

--- Shows a request without touching the cursor, the mode or the focus: inline marks when
--- the edited file is on screen, else a float the cursor does not enter.
---@param req tether.Approval
local function show(req)
  local params = req.params
  local view
  if type(params.preview) == 'table' and params.preview.kind == 'diff' then
    local buf, win = require('tether.buffers').visible(params.preview.uri)
    if buf and win then
      view = preview.inline(buf, params, M.go_hint())
    end
  end
  req.view = view or open_float(req, false)
  if view then -- seen from another buffer: the float, still without taking focus
    vim.api.nvim_create_autocmd('BufEnter', {
      group = vim.api.nvim_create_augroup('tether.approve', { clear = true }),
      callback = function()
        if current ~= req or req.view ~= view then
          return true -- this approval is over: drop the autocmd
        end
        if not req.float and vim.fn.bufwinid(view.buf) == -1 then
          vim.schedule(function()
            if current == req and not req.float then
              open_float(req, false)
            end
          end)
        end
      end,
    })
  end
  local data = {
    runId = params.runId,
    callId = params.callId,
    tool = params.tool,
    title = params.title,
    view = req.view,
  }
  if package.loaded['tether.chat'] then -- a chat's run: noted in the chat too
    require('tether.chat').on_approve(data)
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'TetherApprove', modeline = false, data = data })
  vim.cmd.redrawstatus({ bang = true })
end

--- `:TetherApprove`: goes to the approval waiting (its float, opened if needed) so that its
--- keys decide. Returns false when none waits.
---@return boolean
function M.focus()
  local req = current
  if not req or req.edit_buf then
    if req and req.edit_buf and vim.api.nvim_buf_is_valid(req.edit_buf) then
      local win = vim.fn.bufwinid(req.edit_buf)
      if win ~= -1 then
        vim.api.nvim_set_current_win(win)
      end
    end
    return req ~= nil
  end
  local win = vim.api.nvim_get_current_win()
  if not (req.float and win == req.float.win) then
    req.prev_win = win
  end
  if vim.fn.mode() ~= 'n' then
    vim.cmd.stopinsert() -- the user asked to decide: the float's keys are Normal-mode keys
  end
  if req.float and vim.api.nvim_win_is_valid(req.float.win) then
    vim.api.nvim_set_current_win(req.float.win)
    if req.float.hunks then
      draw_hunks(req) -- the current change marked, the cursor on it, as the user comes in
    end
  else
    open_float(req, true)
  end
  return true
end

local function next_request()
  if current or #queue == 0 then
    return
  end
  current = table.remove(queue, 1)
  local ok, err = pcall(show, current)
  if not ok then
    vim.notify('Tether: cannot show the approval: ' .. tostring(err), vim.log.levels.ERROR)
    M.decide({ decision = 'deny', feedback = 'the editor could not show this call' })
  end
end

--- Queues a request; `callback` gets the answer once the user decides.
---@param params table agent/approve params
---@param callback fun(answer: table)
---@param extra? { client_id?: integer, request_id?: integer|string }
function M.ask(params, callback, extra)
  extra = extra or {}
  table.insert(queue, {
    params = params,
    callback = callback,
    client_id = extra.client_id,
    request_id = extra.request_id,
  })
  next_request()
end

--- The id of the server request being handled, found in Neovim's RPC loop (0.11 does not
--- pass it to handlers; `$/cancelRequest` names it). Nil where Neovim keeps it elsewhere.
---@param params table the params the handler got (the same table as the message's)
---@return integer|string?
function M.request_id(params)
  for level = 2, 12 do
    local info = debug.getinfo(level, 'f')
    if not info then
      return nil
    end
    for i = 1, 64 do
      local name, value = debug.getupvalue(info.func, i)
      if not name then
        break
      end
      if name == 'decoded' and type(value) == 'table' and value.params == params then
        return value.id
      end
    end
  end
  return nil
end

--- The `agent/approve` handler: its return value is the response. Pending changes are sent
--- before the answer, so the server reads the answer against the text the user sees.
---@param params table
---@param ctx? table
---@return table answer
function M.handle(_, params, ctx)
  local client_id = ctx and ctx.client_id
  local co, is_main = coroutine.running()
  if co and not is_main then
    M.ask(params, function(answer)
      vim.schedule(function() -- never resume before the yield below
        require('tether.sync').flush(client_id)
        local ok, err = coroutine.resume(co, answer)
        if not ok then
          vim.notify('Tether: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end, { client_id = client_id, request_id = M.request_id(params) })
    return coroutine.yield()
  end
  local answer = M.ask_blocking(params)
  require('tether.sync').flush(client_id)
  return answer
end

--- `$/cancelRequest` from the server: it stopped waiting for an approval (run cancelled or
--- ended, approval timeout). Its UI closes; the answer Neovim sends is ignored.
---@param params { id: integer|string }
---@param ctx? table
function M.on_cancel(_, params, ctx)
  local id = type(params) == 'table' and params.id
  if id == nil then
    return
  end
  local client_id = ctx and ctx.client_id
  local function matches(req)
    return req.request_id == id and (client_id == nil or req.client_id == client_id)
  end
  for i = #queue, 1, -1 do
    if matches(queue[i]) then
      table.remove(queue, i).callback({ decision = 'deny', feedback = 'withdrawn' })
    end
  end
  if current and matches(current) then
    M.decide({ decision = 'deny', feedback = 'withdrawn' })
    vim.notify('Tether: the approval was withdrawn', vim.log.levels.INFO)
  end
end

--- Without a coroutine to suspend: a blocking dialog.
---@param params table
---@return table answer
function M.ask_blocking(params)
  local lines = params.preview
      and params.preview.kind == 'command'
      and ('$ ' .. params.preview.command)
    or (params.preview and params.preview.diff or '')
  local choice = vim.fn.confirm(
    'Tether: ' .. (params.title or params.tool) .. '\n\n' .. lines,
    '&allow\nallow a&lways\n&deny',
    3,
    'Warning'
  )
  return { decision = ({ 'allow', 'allow-always', 'deny' })[choice] or 'deny' }
end

--- Answers the request shown now and shows the next one.
---@param answer table { decision, feedback?, arguments?, editedText? }
function M.decide(answer)
  local req = current
  if not req then
    return
  end
  current = nil
  local edit_buf = req.edit_buf
  req.edit_buf = nil
  if edit_buf then -- later: this may run in the buffer's own BufWriteCmd
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(edit_buf) then
        vim.api.nvim_buf_delete(edit_buf, { force = true })
      end
    end)
  end
  local in_float = req.float and vim.api.nvim_get_current_win() == req.float.win
  hide(req)
  if in_float and req.prev_win and vim.api.nvim_win_is_valid(req.prev_win) then
    vim.api.nvim_set_current_win(req.prev_win) -- back where the user came from
  end
  req.callback(answer)
  next_request()
end

--- Allow always for the editor session: with the exact rule the server offers (the
--- command's words, the file), listed by `:TetherRules` and revocable; without one a bare
--- `allow-always` (the server keeps the exact command, or the tool, for the session).
function M.allow_always()
  local req = current
  if not req then
    return
  end
  local exact = offered(req.params)
  local answer = { decision = 'allow-always' }
  if exact then
    answer.rule = { tool = req.params.tool, pattern = exact, decision = 'allow', scope = 'session' }
  end
  M.decide(answer)
end

--- Allow always with a rule: `vim.ui.input` offers the server's wider rule (`pytest *`,
--- `src/*.py`; else its exact one) to confirm or change; the answer carries it as `rule`
--- with `allow-always`. The server stores it (in the editor session, or `rule_scope`) only
--- if it covers the call shown; otherwise the call is allowed once. Cancelled or empty:
--- the approval still waits.
function M.allow_rule()
  local req = current
  if not req or req.edit_buf then
    return
  end
  local tool = req.params.tool
  if tool ~= 'bash' and tool ~= 'edit_file' and tool ~= 'write_file' then
    return vim.notify('Tether: rules exist for bash, edit_file and write_file', vim.log.levels.WARN)
  end
  local exact, wide = offered(req.params)
  local scope = require('tether.rules').scope()
  local prompt = string.format('Tether: allow always (%s rule) %s: ', scope, tool)
  vim.ui.input({ prompt = prompt, default = wide or exact or '' }, function(pattern)
    if current ~= req or not pattern or not pattern:match('%S') then
      return
    end
    M.decide({
      decision = 'allow-always',
      rule = { tool = tool, pattern = vim.trim(pattern), decision = 'allow', scope = scope },
    })
  end)
end

--- Deny, with optional feedback for the model (`vim.ui.input`; empty or cancelled: none).
function M.deny()
  local req = current
  vim.ui.input({ prompt = 'Tether: deny — feedback for the model (optional): ' }, function(text)
    if current ~= req then
      return
    end
    local answer = { decision = 'deny' }
    if text and text:match('%S') then
      answer.feedback = text
    end
    M.decide(answer)
  end)
end

--- Edit before allowing: the proposed text (an edit's new lines, or the command) opens in a
--- scratch buffer; `:w` allows the call with the saved text (`editedText`, or the command
--- as its argument). Closing the buffer without writing shows the request again.
function M.edit()
  local req = current
  local text, field = editable(req and req.params or {})
  if not req or not text then
    return
  end
  local args = req.params.arguments or {}
  local eol = field == 'proposed' and text:match('[\r\n]$') ~= nil
  local lines = field == 'proposed' and preview.text_lines(text)
    or vim.split(text, '\n', { plain = true })
  hide(req)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_name(buf, string.format('tether://edit/%s/%s', req.params.callId, field))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  local file = field == 'proposed' and vim.uri_to_fname(req.params.preview.uri) or ''
  local filetype = field == 'command' and 'sh' or vim.filetype.match({ filename = file })
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  req.edit_buf = buf
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      local new = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
      vim.bo[buf].modified = false
      if current == req and field == 'command' then
        M.decide({
          decision = 'allow',
          arguments = vim.tbl_extend('force', args, { command = new }),
        })
      elseif current == req then
        M.decide({ decision = 'allow', editedText = new .. (eol and '\n' or '') })
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      if current == req and req.edit_buf == buf then
        req.edit_buf = nil
        vim.schedule(function()
          if current == req then
            show(req)
          end
        end)
      end
    end,
  })
  vim.api.nvim_open_win(buf, true, { split = 'below', win = -1, height = math.min(#lines + 2, 15) })
end

--- Drops the requests of a run that ended (answered deny; nobody waits for them).
---@param run_id string
function M.dismiss_run(run_id)
  for i = #queue, 1, -1 do
    if queue[i].params.runId == run_id then
      table.remove(queue, i).callback({ decision = 'deny', feedback = 'the run ended' })
    end
  end
  if current and current.params.runId == run_id then
    M.decide({ decision = 'deny', feedback = 'the run ended' })
  end
end

--- The request shown now, if any (for statuslines and tests).
---@return table? params
function M.pending()
  return current and current.params
end

--- A statusline component: "Tether: approve <title> (+n)" while approvals wait, else "".
---@return string
function M.statusline()
  if not current then
    return ''
  end
  local more = #queue > 0 and string.format(' (+%d)', #queue) or ''
  return 'Tether: approve ' .. (current.params.title or current.params.tool or '?') .. more
end

return M
