--- Answers `agent/ask`: the model's question, asked with `vim.ui.select` (its choices, and
--- "Type an answer…" when the model takes one) or `vim.ui.input` (no choices). The question
--- and the choices arrive escaped by the server (control and bidi characters written out);
--- they are shown on one line. Closing the picker or an empty answer answers nothing. A
--- secret (a command's password prompt) is typed with `vim.fn.inputsecret`: not shown.
local M = {}

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
      if text == nil or vim.trim(text) == '' then
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

--- The `agent/ask` handler: its return value is the response (the request waits, in the
--- LSP client's coroutine, for the user's answer).
---@param params table
---@return table answer
function M.handle(_, params)
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
  local answer
  M.ask(params, function(given)
    answer = given
  end)
  vim.wait(300000, function()
    return answer ~= nil
  end, 50)
  return answer or vim.empty_dict()
end

return M
