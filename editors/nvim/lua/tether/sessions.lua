--- Sessions: the conversations runs continue. `:TetherSessions` offers the server's
--- (`agent/sessions`) and those this Neovim ran, and continues the one picked.
local M = {}

local protocol = require('tether.protocol')

---@class tether.Session
---@field id string
---@field prompt string the first prompt (the server's title)
---@field last_prompt? string
---@field last_run? string
---@field runs integer
---@field outcome? string of the latest finished run
---@field updated? integer os.time() of the last run (the server's `updatedAt`)
---@field folder? string the workspace it ran in, when this Neovim knows it

---@type tether.Session[] the sessions of this Neovim's runs, oldest first
M.list = {}

--- Where the folders of sessions are kept between Neovims (session id → workspace).
---@return string
function M.folders_file()
  return vim.fs.joinpath(vim.fn.stdpath('state'), 'tether', 'session-folders.json')
end

--- Session id → the workspace it ran in, as this and earlier Neovims noted.
---@return table<string, string>
function M.folders()
  local file = io.open(M.folders_file(), 'r')
  if not file then
    return {}
  end
  local ok, known = pcall(vim.json.decode, file:read('*a'))
  file:close()
  return ok and type(known) == 'table' and known or {}
end

--- Notes the folder of a session (best effort: a failed write only forgets it).
---@param id string
---@param folder string
local function note_folder(id, folder)
  local known = M.folders()
  if known[id] == folder then
    return
  end
  known[id] = folder
  local path = M.folders_file()
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local temporary = path .. '.' .. vim.fn.getpid() .. '.tmp'
  local file = io.open(temporary, 'w')
  if file then
    file:write(vim.json.encode(known))
    file:close()
    vim.uv.fs_rename(temporary, path)
  end
end

--- The workspace a run's server serves.
---@param run tether.Run
---@return string?
local function folder_of(run)
  local client = run.client_id and vim.lsp.get_client_by_id(run.client_id)
  return client and client.root_dir or nil
end

--- Records a run in its session.
---@param run tether.Run
function M.remember(run)
  if not run.session_id then
    return
  end
  local folder = folder_of(run)
  if folder then
    pcall(note_folder, run.session_id, folder)
  end
  local outcome = run.result and run.result.outcome
  for _, session in ipairs(M.list) do
    if session.id == run.session_id then
      if session.last_run ~= run.id then
        session.last_run, session.runs = run.id, session.runs + 1
        session.last_prompt = run.prompt
      end
      session.outcome, session.updated = outcome or session.outcome, os.time()
      session.folder = session.folder or folder
      return
    end
  end
  table.insert(M.list, {
    id = run.session_id,
    prompt = run.prompt,
    last_prompt = run.prompt,
    last_run = run.id,
    runs = 1,
    outcome = outcome,
    updated = os.time(),
    folder = folder,
  })
end

--- Seconds since the epoch of an ISO 8601 time in UTC (`2026-12-02T04:10:00+00:00`).
---@param stamp any
---@return integer?
function M.epoch(stamp)
  if type(stamp) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, sec = stamp:match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y then
    return nil
  end
  local fields = { year = y, month = mo, day = d, hour = h, min = mi, sec = sec, isdst = false }
  local as_local = os.time(fields) -- read as local time: shift by the zone's offset
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date('!*t', now)))
  return math.floor(as_local + offset)
end

--- The sessions to offer, newest first: the server's when it answers `agent/sessions`,
--- then this Neovim's that it did not list.
---@param callback fun(sessions: tether.Session[])
function M.fetch(callback)
  local mine = {}
  for i = #M.list, 1, -1 do
    table.insert(mine, M.list[i])
  end
  local tether = require('tether')
  -- a client still starting too (get_clients() leaves those out): right after Neovim starts
  local client = tether.ensure_client(vim.api.nvim_get_current_buf())
  if not client or not protocol.methods.agentSessions then
    return callback(mine)
  end
  tether.when_ready(client, vim.api.nvim_get_current_buf(), function(ready_err)
    if ready_err then
      return callback(mine)
    end
    local method = protocol.methods.agentSessions
    tether.request(client, method, vim.empty_dict(), function(err, result)
      if err or type(result) ~= 'table' or type(result.sessions) ~= 'table' then
        return callback(mine) -- a server without agent/sessions
      end
      local list, seen, folders = {}, {}, M.folders()
      for _, s in ipairs(result.sessions) do
        seen[s.sessionId] = true
        local outcome = s.lastOutcome ~= vim.NIL and s.lastOutcome or nil
        table.insert(list, {
          id = s.sessionId,
          prompt = s.title,
          runs = s.runs,
          outcome = outcome,
          updated = M.epoch(s.updatedAt),
          folder = folders[s.sessionId],
        })
      end
      for _, s in ipairs(mine) do
        if not seen[s.id] then
          table.insert(list, s)
        end
      end
      callback(list)
    end)
  end)
end

---@param s tether.Session
---@return string
function M.label(s)
  local runs = tonumber(s.runs) or 0
  local when = s.updated and os.date('%Y-%m-%d %H:%M', s.updated) or '?'
  local where = s.folder and vim.fn.fnamemodify(s.folder, ':~') or 'folder unknown'
  return string.format(
    '%s  (%s · %s · %d run%s, %s)',
    s.prompt,
    when,
    where,
    runs,
    runs == 1 and '' or 's',
    s.outcome or 'running'
  )
end

--- Picks a session (`vim.ui.select`), asks for a prompt (`vim.ui.input`) and runs it in
--- that session.
function M.pick()
  M.fetch(function(items)
    if #items == 0 then
      return vim.notify('Tether: no session yet: start one with :Tether {prompt}')
    end
    vim.ui.select(
      items,
      { prompt = 'Continue a Tether session', kind = 'tether_session', format_item = M.label },
      function(session)
        if not session then
          return
        end
        vim.ui.input({ prompt = 'Tether (continue): ' }, function(prompt)
          if prompt and prompt:match('%S') then
            local opts = { session_id = session.id, editor_session = true }
            require('tether.commands').run(prompt, opts)
          end
        end)
      end
    )
  end)
end

return M
