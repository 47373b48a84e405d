--- Answers `agent/ask`: the model's question, asked with `vim.ui.select` (its choices, and
--- "Type an answer…" when the model takes one) or `vim.ui.input` (no choices). The question
--- and the choices arrive escaped by the server (control and bidi characters written out);
--- they are shown on one line. Closing the picker or an empty answer answers nothing, except
--- that Enter alone answers a command's question (`enterAlone`: its default). A secret (a
--- command's password prompt) is typed with `vim.fn.inputsecret`: not shown (an empty one is
--- no answer: `inputsecret` cannot tell Escape from Enter alone). A
--- question the server withdraws (`$/cancelRequest`: its run was cancelled or ended) is
--- answered nothing at once, and its prompt closes when it is Neovim's own (else a note
--- says so).
local M = {}

--- The questions waiting for the user, by client and request id: each withdraws its own.
---@type table<string, fun()>
local waiting = {}

--- The key of request `id` of client `ctx.client_id` in `waiting` (nil: no id known).
---@param id integer|string|nil
---@param ctx? table
---@return string?
local function key(id, ctx)
  return id ~= nil and (tostring(ctx and ctx.client_id or 0) .. ':' .. tostring(id)) or nil
end

local OTHER = 'Type an answer…'

---@param text any
---@return string
local function one_line(text)
  return (tostring(text or ''):gsub('%s+', ' '))
end

--- Asks `params` (agent/ask params) and calls `done` with the answer (`{ answer = … }`, or
--- an empty object when nothing was answered).
---@param params table
---@param done fun(answer: table)
function M.ask(params, done)
  local choices = type(params.choices) == 'table' and params.choices or {}
  local free = #choices == 0 or params.freeText ~= false
  local question = 'Tether asks: ' .. one_line(params.question)
  local function typed()
    local prompt = question .. (#choices > 0 and ' (your answer): ' or ': ')
    if params.secret == true then -- a command's password prompt: nothing typed is shown
      local ok, text = pcall(vim.fn.inputsecret, prompt)
      if not ok or type(text) ~= 'string' or vim.trim(text) == '' then
        done(vim.empty_dict())
      else
        done({ answer = text })
      end
      return
    end
    vim.ui.input({ prompt = prompt }, function(text)
      if text ~= nil and vim.trim(text) == '' and params.enterAlone == true then
        done({ answer = '' }) -- Enter alone: a command's question takes its default
      elseif text == nil or vim.trim(text) == '' then
        done(vim.empty_dict())
      else
        done({ answer = text })
      end
    end)
  end
  if #choices == 0 then
    return typed()
  end
  local items = vim.deepcopy(choices)
  if free then
    table.insert(items, OTHER)
  end
  vim.ui.select(items, { prompt = question }, function(choice, index)
    if choice == nil or index == nil then
      done(vim.empty_dict())
    elseif free and index == #items then
      typed()
    else
      done({ answer = choices[index] })
    end
  end)
end

--- Closes Neovim's own prompt of a question (`input()`, `inputsecret()`, `inputlist()`,
--- which the default `vim.ui.input` and `vim.ui.select` use): Escape, as the user would.
--- False for a picker of a plugin (a float): it is left to the user, its answer goes nowhere.
---@return boolean closed
local function close_prompt()
  local kind = vim.fn.getcmdtype()
  if vim.api.nvim_get_mode().mode == 'c' and (kind == '@' or kind == '-') then
    vim.api.nvim_input('<Esc>')
    return true
  end
  return false
end

--- The `agent/ask` handler: its return value is the response (the request waits, in the
--- LSP client's coroutine, for the user's answer or the question's withdrawal).
---@param params table
---@param ctx? table
---@return table answer
function M.handle(_, params, ctx)
  local id = key(require('tether.approve').request_id(params), ctx)
  local co, is_main = coroutine.running()
  if co and not is_main then
    local settled = false
    local function settle(answer)
      if settled then
        return -- withdrawn: the prompt closed after, its answer goes nowhere
      end
      settled = true
      if id ~= nil then
        waiting[id] = nil
      end
      vim.schedule(function() -- never resume before the yield below
        local ok, err = coroutine.resume(co, answer)
        if not ok then
          vim.notify('Tether: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end
    if id ~= nil then
      waiting[id] = function()
        settle(vim.empty_dict())
        if not close_prompt() then -- a plugin's picker stays: say its answer goes nowhere
          vim.notify('Tether: the question was withdrawn', vim.log.levels.INFO)
        end
      end
    end
    M.ask(params, settle)
    return coroutine.yield()
  end
  local answer
  M.ask(params, function(given)
    answer = given
  end)
  vim.wait(300000, function()
    return answer ~= nil
  end, 50)
  return answer or vim.empty_dict()
end

--- `$/cancelRequest` from the server: it stopped waiting for an answer to that question.
---@param params { id: integer|string }
---@param ctx? table
function M.on_cancel(_, params, ctx)
  local id = type(params) == 'table' and key(params.id, ctx)
  local withdraw = id and waiting[id]
  if withdraw then
    withdraw()
  end
end

return M
