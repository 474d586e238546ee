#include "gpu/instance.h"

#include <cstring>
#include <mutex>
#include <string>

namespace vkllm::gpu {

// volk keeps the loader and the instance-level entry points in globals; the loader's
// trampolines serve every instance, so loading them once per process is enough. The mutex
// keeps two runtimes created at once from writing them concurrently.
static std::mutex g_loader_mutex;

static void load_loader() {
    static bool loaded = false;
    if (loaded) return;
    if (volkInitialize() != VK_SUCCESS)
        fail(VKLLM_ERR_NO_DEVICE,
             "no Vulkan loader: libvulkan.so.1 could not be opened (install libvulkan1 and a "
             "Vulkan driver, e.g. mesa-vulkan-drivers)");
    loaded = true;
}

static bool has_layer(const char *name) {
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkLayerProperties> layers(n);
    if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
    for (const auto &l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

static bool has_instance_extension(const char *name) {
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkExtensionProperties> extensions(n);
    if (vkEnumerateInstanceExtensionProperties(nullptr, &n, extensions.data()) != VK_SUCCESS)
        return false;
    for (const auto &e : extensions)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

Instance::Instance(bool validation, Logger log, const VulkanOptions &options)
    : options_(options), log_(log) {
    std::lock_guard<std::mutex> lock(g_loader_mutex);
    load_loader();
    if (volkGetInstanceVersion() < VK_API_VERSION_1_1)
        fail(VKLLM_ERR_NO_DEVICE, "the Vulkan loader is older than Vulkan 1.1");

    const char *layer = "VK_LAYER_KHRONOS_validation";
    std::vector<const char *> layers, extensions;
    if (validation) {
        if (!has_layer(layer))
            fail(VKLLM_ERR_UNSUPPORTED,
                 "validation was requested but %s is not installed (Debian: "
                 "vulkan-validationlayers)",
                 layer);
        layers.push_back(layer);
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    // Loaders since 1.3.216 hide portability drivers (MoltenVK on macOS and iOS) from an
    // application that does not ask for them; asking where the loader offers it costs nothing
    // on other platforms and is the only way an Apple device is enumerated at all.
    bool portability = has_instance_extension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    if (portability) extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);

    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkllm";
    app.pEngineName = "vkllm";
    app.engineVersion = VKLLM_VERSION_NUMBER;
    // 1.2 is the highest version whose structures vkllm reads (device_info.cpp); the shaders
    // are SPIR-V 1.3, which 1.1 takes. A cap makes this instance what a 1.1 (or 1.0) loader
    // and application would see: the validation layer then holds every call to that version.
    if (options.api_version && options.api_version < api_version_)
        api_version_ = options.api_version;
    app.apiVersion = api_version_;

    VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    dbg.pfnUserCallback = &Instance::on_message;
    dbg.pUserData = this;

    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    ci.enabledLayerCount = uint32_t(layers.size());
    ci.ppEnabledLayerNames = layers.data();
    ci.enabledExtensionCount = uint32_t(extensions.size());
    ci.ppEnabledExtensionNames = extensions.data();
    if (portability) ci.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    // Synchronization validation reports missing or wrong barriers between dispatches (a
    // race the core checks cannot see); the messenger is chained behind it so that instance
    // creation and destruction are validated too.
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    features.pNext = &dbg;
    if (validation) ci.pNext = &features;

    VkResult r = vkCreateInstance(&ci, nullptr, &instance_);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
        fail(VKLLM_ERR_NO_DEVICE,
             "no Vulkan driver: vkCreateInstance returned %s (is a Vulkan ICD installed, and do "
             "VK_DRIVER_FILES / VK_ICD_FILENAMES point at it?)",
             result_name(r));
    check(r, "vkCreateInstance");
    enabled_extensions_.assign(extensions.begin(), extensions.end());
    create_flags_ = ci.flags;
    std::string names;
    for (const std::string &e : enabled_extensions_)
        names += " " + e;
    log_(VKLLM_LOG_DEBUG, "Vulkan instance " + std::to_string(VK_API_VERSION_MAJOR(api_version_)) +
                              "." + std::to_string(VK_API_VERSION_MINOR(api_version_)) +
                              ", extensions enabled:" + (names.empty() ? " none" : names));
    // The core entry points are the loader's trampolines and serve every instance: loaded
    // once. Reloading them for each instance would also overwrite the extension entry points
    // another live instance still uses (a runtime without validation has no debug utils).
    static bool instance_loaded = false;
    if (!instance_loaded) volkLoadInstanceOnly(instance_);
    instance_loaded = true;

    if (validation) {
        auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
        destroy_messenger_ = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        r = create && destroy_messenger_ ? create(instance_, &dbg, nullptr, &messenger_)
                                         : VK_ERROR_EXTENSION_NOT_PRESENT;
        if (r != VK_SUCCESS) {
            vkDestroyInstance(instance_, nullptr);
            check(r, "vkCreateDebugUtilsMessengerEXT");
        }
    }
}

Instance::~Instance() {
    if (messenger_) destroy_messenger_(instance_, messenger_, nullptr);
    vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
    uint32_t n = 0;
    VkResult r = vkEnumeratePhysicalDevices(instance_, &n, nullptr);
    if (r == VK_ERROR_INITIALIZATION_FAILED || (r == VK_SUCCESS && n == 0))
        fail(VKLLM_ERR_NO_DEVICE, "no Vulkan device: the driver reports none");
    check(r, "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(n);
    check(vkEnumeratePhysicalDevices(instance_, &n, devices.data()), "vkEnumeratePhysicalDevices");
    devices.resize(n);
    return devices;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
    auto *self = static_cast<Instance *>(user);
    bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
    (error ? self->errors_ : self->warnings_).fetch_add(1);
    std::string msg =
        std::string("Vulkan validation: ") + (data && data->pMessage ? data->pMessage : "");
    self->log_(error ? VKLLM_LOG_ERROR : VKLLM_LOG_WARNING, msg);
    return VK_FALSE;
}

}  // namespace vkllm::gpu
