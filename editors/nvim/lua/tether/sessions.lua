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
---@field updated? integer os.time()

---@type tether.Session[] the sessions of this Neovim's runs, oldest first
M.list = {}

--- Records a run in its session.
---@param run tether.Run
function M.remember(run)
  if not run.session_id then
    return
  end
  local outcome = run.result and run.result.outcome
  for _, session in ipairs(M.list) do
    if session.id == run.session_id then
      if session.last_run ~= run.id then
        session.last_run, session.runs = run.id, session.runs + 1
        session.last_prompt = run.prompt
      end
      session.outcome, session.updated = outcome or session.outcome, os.time()
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
  })
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
  local client = tether.get_client()
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
      local list, seen = {}, {}
      for _, s in ipairs(result.sessions) do
        seen[s.sessionId] = true
        local outcome = s.lastOutcome ~= vim.NIL and s.lastOutcome or nil
        table.insert(list, { id = s.sessionId, prompt = s.title, runs = s.runs, outcome = outcome })
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
local function label(s)
  local runs = tonumber(s.runs) or 0
  return string.format(
    '%s  (%d run%s, %s)',
    s.prompt,
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
      { prompt = 'Continue a Tether session', kind = 'tether_session', format_item = label },
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
