--- The user commands (`:Tether {prompt}`, `:TetherCancel`, `:TetherLog`,
--- `:TetherSessions`) and the runs this Neovim started.
---
--- The editor session: every `:Tether` continues the server session of the previous one
--- (per server), so what the user allowed always for the session (its session rules) still
--- applies; `:Tether!` starts a new one. The server keeps a session's rules in memory only.
local M = {}

local protocol = require('tether.protocol')

---@class tether.Run
---@field id string
---@field prompt string
---@field client_id integer
---@field session_id? string
---@field params? table the `agent/run` params sent
---@field events table[] the run's `agent/event`s, in order
---@field result? table the `agent/run` result
---@field error? string set when the request failed
---@field done boolean
---@field tx table transcript state
---@field editor_session? boolean the run continues (or starts) the editor session
---@field chat? tether.Chat the chat that sent it (`:TetherChat`)

---@type table<string, tether.Run>
M.runs = {}
---@type string[] run ids, oldest first
M.order = {}

local counter = 0

---@type table<integer, string> client id → the session `:Tether` continues
M.editor_sessions = {}
---@type table<integer, string> client id → the latest run started in the editor session
local latest = {}

--- The session `:Tether` continues on a client (nil: the next run starts one).
---@param client_id integer
---@return string?
function M.editor_session(client_id)
  return M.editor_sessions[client_id]
end

--- Makes a session the one `:Tether` continues (`:TetherSessions` picks one).
---@param run tether.Run
local function adopt(run)
  if run.editor_session and run.session_id and latest[run.client_id] == run.id then
    M.editor_sessions[run.client_id] = run.session_id
  end
end

local function notify(message, level)
  vim.notify('Tether: ' .. message, level or vim.log.levels.INFO)
end

---@param run tether.Run
---@param err? lsp.ResponseError|string
---@param result? table
local function finished(run, err, result)
  run.done, run.result = true, result
  if err then
    run.error = type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err)
  end
  if result then
    run.session_id = result.sessionId or run.session_id
  end
  adopt(run)
  local editor = run.client_id and M.editor_sessions[run.client_id]
  local mine = latest[run.client_id] == run.id
  if mine and run.error and editor and editor == (run.params or {}).sessionId and not result then
    M.editor_sessions[run.client_id] = nil -- e.g. the server forgot it: the next run starts anew
  end
  require('tether.sessions').remember(run)
  require('tether.approve').dismiss_run(run.id)
  require('tether.transcript').finish(run)
  if run.chat then
    require('tether.chat').finish(run)
  end
  if run.error then
    notify(run.error, vim.log.levels.ERROR)
  elseif result then
    local steps = result.steps or 0
    notify(string.format('%s · %d step%s', result.outcome, steps, steps == 1 and '' or 's'))
  end
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'TetherRunFinished',
    modeline = false,
    data = { runId = run.id, result = result, error = run.error },
  })
end

---@class tether.RunOpts
---@field bufnr? integer the buffer given as context (default: the current one)
---@field range? tether.Range the selection given as context
---@field session_id? string continue this session
---@field new_session? boolean start a new editor session (`:Tether!`)
---@field editor_session? boolean continue the editor session (`:Tether`; default false)
---@field chat? tether.Chat the chat sending it: the chat shows the run, not the transcript

--- The run of the editor session of a client in flight, if any (the latest run started in
--- it, whose session may not be known yet, or a run of its session).
---@param client_id integer
---@return tether.Run?
local function editor_run_in_flight(client_id)
  local session = M.editor_sessions[client_id]
  for _, run in ipairs(M.in_flight()) do
    local of_session = session ~= nil and run.session_id == session
    if run.client_id == client_id and (run.id == latest[client_id] or of_session) then
      return run
    end
  end
  return nil
end

--- Runs a prompt: `agent/run` with the buffer (and selection) as context. The transcript
--- shows the run; the result arrives in the `User TetherRunFinished` autocmd.
---@param prompt string
---@param opts? tether.RunOpts
---@return string? run_id
function M.run(prompt, opts)
  opts = opts or {}
  if type(prompt) ~= 'string' or not prompt:match('%S') then
    notify('give a prompt, e.g. :Tether fix the failing test', vim.log.levels.WARN)
    return nil
  end
  local tether = require('tether')
  local buf = opts.bufnr or vim.api.nvim_get_current_buf()
  local client, err = tether.ensure_client(buf)
  if not client then
    notify(err or 'no server', vim.log.levels.ERROR)
    return nil
  end
  local session_id = opts.session_id
  local editor_session = opts.editor_session or opts.new_session or false
  if opts.editor_session and not opts.new_session and not session_id then
    if editor_run_in_flight(client.id) then
      notify(
        'a run of this session is in flight: wait, :TetherCancel, or :Tether! {prompt} '
          .. 'to start a new session',
        vim.log.levels.WARN
      )
      return nil
    end
    session_id = M.editor_sessions[client.id]
  end
  counter = counter + 1
  ---@type tether.Run
  local run = {
    id = string.format('nvim-%d-%d-%d', vim.fn.getpid(), os.time(), counter),
    prompt = prompt,
    client_id = client.id,
    session_id = session_id,
    events = {},
    done = false,
    tx = {},
    editor_session = editor_session,
    chat = opts.chat,
  }
  M.runs[run.id] = run
  table.insert(M.order, run.id)
  if editor_session then
    latest[client.id] = run.id -- its session becomes the editor session once known
  end
  if tether.config.transcript.open and not opts.chat then
    require('tether.transcript').open({ enter = false })
  end
  tether.when_ready(client, buf, function(ready_err)
    if ready_err then
      return finished(run, ready_err, nil)
    end
    run.params = {
      prompt = prompt,
      runId = run.id,
      sessionId = session_id,
      workDoneToken = 'tether-' .. run.id,
      context = require('tether.context').of(buf, opts.range, client.offset_encoding),
    }
    -- no bufnr: every attached buffer's pending change is sent before the request
    tether.request(client, protocol.methods.agentRun, run.params, function(req_err, result)
      finished(run, req_err, result)
    end)
  end)
  return run.id
end

--- `agent/event`: recorded on its run and written to the transcript.
---@param params table
function M.on_event(_, params, ctx)
  if type(params) ~= 'table' or type(params.runId) ~= 'string' then
    return
  end
  local run = M.runs[params.runId]
  if not run then -- a run started some other way (e.g. the tether.run command)
    run = { id = params.runId, prompt = params.prompt or '', events = {}, done = false, tx = {} }
    run.client_id = ctx and ctx.client_id
    M.runs[run.id] = run
    table.insert(M.order, run.id)
  end
  table.insert(run.events, params)
  if params.kind == 'run-started' then
    run.session_id = params.sessionId
    adopt(run)
    require('tether.sessions').remember(run)
  elseif params.kind == 'run-finished' then
    require('tether.approve').dismiss_run(run.id)
  end
  require('tether.transcript').on_event(run, params)
  if run.chat then
    require('tether.chat').on_event(run, params)
  end
end

---@param id string
---@return tether.Run?
function M.get_run(id)
  return M.runs[id]
end

--- The runs still in flight, newest first.
---@return tether.Run[]
function M.in_flight()
  local runs = {}
  for i = #M.order, 1, -1 do
    local run = M.runs[M.order[i]]
    if not run.done then
      table.insert(runs, run)
    end
  end
  return runs
end

--- `:TetherCancel [runId]`: cancels that run, or the latest one in flight.
---@param run_id? string
function M.cancel(run_id)
  local run = (run_id and run_id ~= '') and M.runs[run_id] or M.in_flight()[1]
  if not run or run.done then
    return notify('no run in flight', vim.log.levels.WARN)
  end
  local client = vim.lsp.get_client_by_id(run.client_id)
  if not client then
    return notify('the server of this run is gone', vim.log.levels.WARN)
  end
  require('tether').request(client, protocol.methods.agentCancel, { runId = run.id }, function(err)
    if err then
      notify('cancel failed: ' .. (err.message or ''), vim.log.levels.ERROR)
    end
  end)
end

--- `:TetherLog`: the transcript, in a window.
function M.log()
  require('tether.transcript').open({ enter = true })
end

--- `:TetherSessions`: pick a session and continue it with a new prompt.
function M.sessions()
  require('tether.sessions').pick()
end

--- Asks for a prompt and runs it; in Visual mode the selection is the context.
function M.prompt()
  local range = require('tether.context').from_visual()
  local buf = vim.api.nvim_get_current_buf()
  vim.ui.input({ prompt = 'Tether: ' }, function(prompt)
    if prompt and prompt:match('%S') then
      M.run(prompt, { bufnr = buf, range = range, editor_session = true })
    end
  end)
end

--- `:[range]Tether[!] {prompt}`; from Visual mode the selection is the context. It continues
--- the editor session; with `!` it starts a new one.
---@param opts table the user command's arguments
function M.command(opts)
  M.run(opts.args, {
    range = require('tether.context').from_command(opts),
    editor_session = true,
    new_session = opts.bang,
  })
end

--- Completion of `:TetherCancel`: the runs in flight.
---@return string[]
function M.complete_runs()
  return vim.tbl_map(function(run)
    return run.id
  end, M.in_flight())
end

return M
