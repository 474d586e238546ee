#include "chat/jinja.h"

#include <new>

#include "chat/jinja_builtins.h"
#include "chat/jinja_eval.h"
#include "chat/jinja_lexer.h"
#include "chat/jinja_parser.h"
#include "common/error.h"

namespace vkllm::chat {

std::string render_template(std::string_view source, const Value &context,
                            const RenderOptions &options) {
    try {
        ParsedTemplate parsed = parse_template(source, options.max_nesting);
        auto globals = std::make_shared<Frame>();
        add_globals(*globals, options);
        auto variables = std::make_shared<Frame>();
        variables->parent = globals;
        if (context.is_dict())
            for (const auto &kv : context.dict().items)
                if (kv.first.is_str()) variables->vars[kv.first.str()] = kv.second;
        Interpreter interp(options);
        try {
            return interp.render(parsed.body, variables);
        } catch (const Error &e) {
            if (interp.raised_by_template()) throw;
            throw Error(e.status(), std::string(e.what()) + " (near " +
                                        position_of(parsed.source, interp.last_offset()) + ")");
        }
    } catch (const Error &) {
        throw;
    } catch (const std::bad_alloc &) {
        throw Error(VKLLM_ERR_OUT_OF_HOST_MEMORY, "out of memory rendering the chat template");
    } catch (const std::length_error &) {
        throw Error(VKLLM_ERR_OUT_OF_HOST_MEMORY, "out of memory rendering the chat template");
    } catch (const std::exception &e) {
        throw Error(VKLLM_ERR_INTERNAL, std::string("rendering the chat template: ") + e.what());
    }
}

}  // namespace vkllm::chat
