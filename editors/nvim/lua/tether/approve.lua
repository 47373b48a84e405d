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
---@field prev_win? integer
---@field saved_maps? table[] buffer-local mappings shadowed by the keys
---@field edit_buf? integer the edit-before-allow buffer

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

---@param params table
---@return string
local function hint(params)
  local k = keys()
  local parts = { k.allow .. ' allow', k.allow_always .. ' always', k.deny .. ' deny' }
  if editable(params) then
    table.insert(parts, k.edit .. ' edit')
  end
  return table.concat(parts, ' · ')
end

local ACTIONS = {
  allow = function()
    M.decide({ decision = 'allow' })
  end,
  allow_always = function()
    M.decide({ decision = 'allow-always' })
  end,
  deny = function()
    M.deny()
  end,
  edit = function()
    M.edit()
  end,
}

---@param req tether.Approval
local function map_keys(req)
  local buf = req.view.buf
  req.saved_maps = {}
  for action, fn in pairs(ACTIONS) do
    local lhs = keys()[action]
    local saved = vim.fn.maparg(lhs, 'n', false, true)
    if saved.buffer == 1 then
      table.insert(req.saved_maps, saved)
    end
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'Tether: ' .. action })
  end
end

---@param req tether.Approval
local function unmap_keys(req)
  local buf = req.view and req.view.buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  for action in pairs(ACTIONS) do
    pcall(vim.keymap.del, 'n', keys()[action], { buffer = buf })
  end
  for _, saved in ipairs(req.saved_maps or {}) do
    vim.api.nvim_buf_call(buf, function()
      vim.fn.mapset('n', false, saved)
    end)
  end
end

--- Removes the marks, float and keys of a request (it may be shown again).
---@param req tether.Approval
local function hide(req)
  local view = req.view
  if view then
    unmap_keys(req)
    req.view = nil
    preview.close(view)
  end
end

--- Shows a request: inline when the edited file is on screen, else in a float.
---@param req tether.Approval
local function show(req)
  local params = req.params
  req.prev_win = req.prev_win or vim.api.nvim_get_current_win()
  local view
  if type(params.preview) == 'table' and params.preview.kind == 'diff' then
    local buf, win = require('tether.buffers').visible(params.preview.uri)
    if buf and win then
      view = preview.inline(buf, params, hint(params))
      if view then
        vim.api.nvim_set_current_win(win)
        vim.api.nvim_win_set_cursor(win, { view.line, 0 })
      end
    end
  end
  req.view = view or preview.float(params, hint(params))
  map_keys(req)
  local float = req.view.win
  if float then -- closing the float (`q`, `:q`) denies
    vim.keymap.set('n', 'q', function()
      M.decide({ decision = 'deny' })
    end, { buffer = req.view.buf, nowait = true, desc = 'Tether: deny' })
    vim.api.nvim_create_autocmd('WinClosed', {
      pattern = tostring(float),
      once = true,
      callback = function()
        if current == req and req.view and req.view.win == float then
          req.view = nil
          vim.schedule(function()
            if current == req then
              M.decide({ decision = 'deny' })
            end
          end)
        end
      end,
    })
  end
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'TetherApprove',
    modeline = false,
    data = { runId = params.runId, callId = params.callId, tool = params.tool, view = req.view },
  })
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
function M.ask(params, callback)
  table.insert(queue, { params = params, callback = callback })
  next_request()
end

--- The `agent/approve` handler: its return value is the response.
---@param params table
---@return table answer
function M.handle(_, params, _)
  local co, is_main = coroutine.running()
  if co and not is_main then
    M.ask(params, function(answer)
      vim.schedule(function() -- never resume before the yield below
        local ok, err = coroutine.resume(co, answer)
        if not ok then
          vim.notify('Tether: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end)
    return coroutine.yield()
  end
  return M.ask_blocking(params)
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
  hide(req)
  local edit_buf = req.edit_buf
  req.edit_buf = nil
  if edit_buf then -- later: this may run in the buffer's own BufWriteCmd
    vim.schedule(function()
      if vim.api.nvim_buf_is_valid(edit_buf) then
        vim.api.nvim_buf_delete(edit_buf, { force = true })
      end
    end)
  end
  if req.prev_win and vim.api.nvim_win_is_valid(req.prev_win) then
    vim.api.nvim_set_current_win(req.prev_win)
  end
  req.callback(answer)
  next_request()
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
        M.decide({ decision = 'allow', arguments = vim.tbl_extend('force', args, { command = new }) })
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

return M
