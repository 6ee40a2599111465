-- The decision of the algorithm that ARGV[i] names, defined at its first use in a call (see stacked.lua).
local function decider(i)
  local name = ARGV[i]
  local decide = algorithms[name]
  if decide == nil then
    if define[name] == nil then
      error('ARGV[' .. i .. '] names no algorithm: "' .. tostring(name) .. '"')
    end
    decide = define[name]()
    algorithms[name] = decide
  end
  return decide
end
