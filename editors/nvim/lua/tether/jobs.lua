--- Background jobs (commands the model started with `bash`'s `background: true`):
--- `:TetherJobs` lists a session's jobs (`agent/jobs`) in `vim.ui.select`; choosing one
--- opens `tether://job/<id>`, a read-only buffer that follows the job's output
--- (`agent/jobOutput`, polled on a timer while a window shows the buffer and the job runs);
--- `x` there, or `:TetherJobStop`, stops it (`agent/jobStop`), `q` closes the window.
---
--- The session is the chat's (the latest chat that has one), else the editor session's
--- (`:Tether`); without either, every session's jobs in this server. What the server sends
--- is escaped already; the command line (the model's text) is escaped here.
local M = {}

local protocol = require('tether.protocol')

--- Milliseconds between two reads of a shown job's output (`setup({ job_poll_ms = … })`).
local function interval()
  return require('tether').config.job_poll_ms or 500
end

---@class tether.JobView
---@field buf integer
---@field client vim.lsp.Client
---@field session_id string
---@field job_id string
---@field command string
---@field next integer the position the next read starts from
---@field open boolean whether the last line is still being printed (no line break yet)
---@field state string
---@field timer? uv.uv_timer_t
---@field busy boolean a read is in flight
---@type table<integer, tether.JobView>
local views = {}

local function shown(text)
  return require('tether.render').shown(text, true)
end

--- The client and the session whose jobs are listed (nil: every session).
---@return vim.lsp.Client?
---@return string?
local function target()
  local client = require('tether').get_client()
  if not client then
    return nil
  end
  local chat = require('tether.chat').current()
  if chat and chat.session_id then
    return client, chat.session_id
  end
  return client, require('tether.commands').editor_session(client.id)
end

local function notify(text, level)
  vim.notify('Tether: ' .. text, level or vim.log.levels.INFO)
end

--- One job as a line: `job-1 · running · 12 s · npm run dev · ready on :5173`.
---@param job table a JobInfo
---@return string
function M.format(job)
  local state = job.state == 'exited' and ('exited ' .. tostring(job.exitCode)) or job.state
  local command = shown(table.concat(vim.split(vim.trim(job.command or ''), '%s+'), ' '))
  if vim.fn.strchars(command) > 60 then
    command = vim.fn.strcharpart(command, 0, 59) .. '…'
  end
  local last = (job.lastLine and job.lastLine ~= '') and (' · ' .. job.lastLine) or ''
  return string.format(
    '%s · %s · %d s · %s%s',
    job.jobId,
    state,
    math.floor((job.runtimeSeconds or 0) + 0.5),
    command,
    last
  )
end

--- The jobs of the session (`agent/jobs`).
---@param callback fun(err?: string, jobs?: table[], client?: vim.lsp.Client)
function M.fetch(callback)
  local client, session_id = target()
  if not client then
    return callback('no Tether server is running')
  end
  local params = session_id and { sessionId = session_id } or vim.empty_dict()
  require('tether').request(client, protocol.methods.agentJobs, params, function(err, result)
    if err or type(result) ~= 'table' or type(result.jobs) ~= 'table' then
      return callback(err and (err.message or vim.inspect(err)) or 'no jobs in the answer')
    end
    callback(nil, result.jobs, client)
  end)
end

---@param view tether.JobView
local function header(view)
  return string.format(
    '%s · %s · %s',
    view.job_id,
    view.state,
    shown(table.concat(vim.split(vim.trim(view.command), '%s+'), ' '))
  )
end

--- Writes into the view's buffer (read-only to the user); windows whose cursor was on the
--- last line follow the end.
---@param view tether.JobView
---@param change fun(buf: integer)
local function write(view, change)
  local buf = view.buf
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local following = {}
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] == last then
      table.insert(following, win)
    end
  end
  vim.bo[buf].modifiable = true
  change(buf)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(following) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

--- Adds what a read returned: `text` continues the last line when that one had no line
--- break yet.
---@param view tether.JobView
---@param result table a JobOutputResult
local function add(view, result)
  write(view, function(buf)
    if view.state ~= result.state then
      view.state = result.state
      local head = header(view)
      if result.state == 'exited' then
        head = head:gsub(' · exited · ', ' · exited ' .. tostring(result.exitCode) .. ' · ', 1)
      end
      vim.api.nvim_buf_set_lines(buf, 0, 1, false, { head })
    end
    local pieces = {}
    if (result.lost or 0) > 0 then
      if view.open then
        table.insert(pieces, '')
      end
      table.insert(pieces, string.format('… [%d characters cut] …', result.lost))
      view.open = false
    end
    local text = result.text or ''
    if text ~= '' then
      local lines = vim.split(text, '\n', { plain = true })
      if view.open then
        local n = vim.api.nvim_buf_line_count(buf)
        local tail = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
        vim.api.nvim_buf_set_lines(buf, n - 1, n, false, { tail .. table.remove(lines, 1) })
      end
      local ended = text:sub(-1) == '\n'
      if ended then
        table.remove(lines) -- the empty piece after the last line break
      end
      vim.list_extend(pieces, lines)
      view.open = not ended
    end
    if result.note and result.note ~= vim.NIL and result.state ~= 'running' then
      table.insert(pieces, '[' .. shown(result.note) .. ']')
    end
    if #pieces > 0 then
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, pieces)
    end
  end)
end

---@param view tether.JobView
local function stop_polling(view)
  if view.timer then
    view.timer:stop()
    view.timer:close()
    view.timer = nil
  end
end

--- One read of the job's output from where the view is.
---@param view tether.JobView
local function poll(view)
  if view.busy then
    return
  end
  view.busy = true
  local params = { sessionId = view.session_id, jobId = view.job_id, since = view.next }
  local method = protocol.methods.agentJobOutput
  require('tether').request(view.client, method, params, function(err, result)
    view.busy = false
    if views[view.buf] ~= view then
      return
    end
    if err or type(result) ~= 'table' then
      stop_polling(view)
      local why = err and err.message or 'no output in the answer'
      notify(view.job_id .. ': ' .. why, vim.log.levels.WARN)
      return
    end
    view.next = result.next or view.next
    add(view, result)
    if result.state ~= 'running' then
      stop_polling(view)
    end
  end)
end

--- Starts following the job (once: it is shown and still runs).
---@param view tether.JobView
local function start_polling(view)
  if view.timer or view.state ~= 'running' then
    return
  end
  local timer = assert(vim.uv.new_timer())
  view.timer = timer
  timer:start(
    0,
    interval(),
    vim.schedule_wrap(function()
      if view.timer ~= timer then
        return
      end
      if not vim.api.nvim_buf_is_valid(view.buf) or vim.fn.bufwinid(view.buf) == -1 then
        stop_polling(view) -- hidden: BufWinEnter starts it again
        return
      end
      poll(view)
    end)
  )
end

--- Whether the view of `buf` is following its job now.
---@param buf integer
---@return boolean
function M.polling(buf)
  local view = views[buf]
  return view ~= nil and view.timer ~= nil
end

--- Stops the job of a view (`x`, `:TetherJobStop` in its buffer).
---@param view tether.JobView
local function stop_job(view)
  local params = { sessionId = view.session_id, jobId = view.job_id }
  local method = protocol.methods.agentJobStop
  require('tether').request(view.client, method, params, function(err, result)
    if err then
      local why = err.message or vim.inspect(err)
      return notify(view.job_id .. ': ' .. why, vim.log.levels.WARN)
    end
    if type(result) == 'table' and result.stopped then
      notify('stopped ' .. view.job_id)
    else
      notify(view.job_id .. ' is not running')
    end
    poll(view) -- its last output and its state
  end)
end

--- Opens (or goes to) the buffer following `job`.
---@param client vim.lsp.Client
---@param job table a JobInfo
---@return integer buf
function M.open(client, job)
  local name = 'tether://job/' .. job.jobId
  local buf = vim.fn.bufnr(name)
  local view = buf ~= -1 and views[buf] or nil
  if view and view.session_id ~= job.sessionId then
    stop_polling(view)
    vim.api.nvim_buf_delete(buf, { force = true })
    view = nil
  end
  if not view then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'tetherjob'
    view = {
      buf = buf,
      client = client,
      session_id = job.sessionId,
      job_id = job.jobId,
      command = job.command or '',
      next = 0,
      open = false,
      state = 'running',
      busy = false,
    }
    views[buf] = view
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { header(view), '' })
    vim.bo[buf].modifiable = false
    vim.keymap.set('n', 'x', function()
      stop_job(view)
    end, { buffer = buf, nowait = true, desc = 'Tether: stop this job' })
    vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true, desc = 'close' })
    vim.api.nvim_create_autocmd('BufWinEnter', {
      buffer = buf,
      callback = function()
        start_polling(view)
      end,
    })
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      callback = function()
        stop_polling(view)
        views[buf] = nil
      end,
    })
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  start_polling(view)
  return buf
end

--- `:TetherJobs`: the session's jobs; the one chosen opens in its buffer.
function M.list()
  M.fetch(function(err, jobs, client)
    if err then
      return notify(err, vim.log.levels.WARN)
    end
    if #jobs == 0 then
      return notify('no background jobs in this session')
    end
    vim.ui.select(jobs, { prompt = 'Tether: jobs', format_item = M.format }, function(job)
      if job then
        M.open(assert(client), job)
      end
    end)
  end)
end

--- `:TetherJobStop [ID]`: stops the job of the current job buffer, or job ID of the
--- session.
---@param job_id? string
function M.stop(job_id)
  local view = views[vim.api.nvim_get_current_buf()]
  if view and (job_id == nil or job_id == '' or job_id == view.job_id) then
    return stop_job(view)
  end
  if job_id == nil or job_id == '' then
    return notify('which job? :TetherJobStop job-1 (or x in its buffer)', vim.log.levels.WARN)
  end
  M.fetch(function(err, jobs, client)
    if err then
      return notify(err, vim.log.levels.WARN)
    end
    for _, job in ipairs(jobs) do
      if job.jobId == job_id then
        local target_view = { client = assert(client), session_id = job.sessionId, buf = -1 }
        target_view.job_id = job_id
        return stop_job(target_view)
      end
    end
    notify('no job ' .. shown(job_id) .. ' in this session', vim.log.levels.WARN)
  end)
end

return M
