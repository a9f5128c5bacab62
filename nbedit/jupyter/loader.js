// Each nbedit widget's own script: load the shared code model's module once per page, then draw.
// The real code lives in one model that every review and history table points at, so a saved
// notebook keeps it once, not once per output.
const PREFIX = "IPY_MODEL_";
const cache = (globalThis.__nbeditModules = globalThis.__nbeditModules || new Map());

async function load(model) {
  const code = await model.widget_manager.get_model(String(model.get("code")).slice(PREFIX.length));
  const part = model.get("part");
  const key = `${code.get("version")}:${part}`;
  if (!cache.has(key)) {
    cache.set(key, (async () => {
      const id = `nbedit-style-${code.get("version")}`;
      if (!document.getElementById(id)) {
        const style = document.createElement("style");
        style.id = id;
        style.textContent = code.get("style");
        document.head.appendChild(style);
      }
      const url = URL.createObjectURL(new Blob([code.get("modules")[part]], { type: "text/javascript" }));
      try {
        return await import(url);
      } finally {
        URL.revokeObjectURL(url);
      }
    })());
  }
  return cache.get(key);
}

export default {
  async render({ model, el }) {
    try {
      const module = await load(model);
      return module.default.render({ model, el });
    } catch (error) {
      el.textContent = `nbedit: this view could not load its code (${error}); run the cell again`;
    }
  },
};
