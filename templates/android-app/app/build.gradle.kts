import java.util.Properties

// Values come from ../apk.properties, written by the app builder through its Properties escaper
// (jobs/apk/escape.ts); the signing key only from the environment (never a file in the project).
val apk = Properties().apply {
    val f = rootProject.file("apk.properties")
    if (f.exists()) f.inputStream().use { load(it) }
}
fun apkValue(key: String, fallback: String): String = apk.getProperty(key) ?: fallback

plugins {
    id("com.android.application")
}

android {
    namespace = "id.isp.appbuilder"
    compileSdk = 34

    defaultConfig {
        applicationId = apkValue("application_id", "id.isp.appbuilder.template")
        minSdk = 24
        targetSdk = 34
        versionCode = apkValue("version_code", "1").toInt()
        versionName = apkValue("version_name", "1.0.0")
        manifestPlaceholders["screenOrientation"] = apkValue("screen_orientation", "unspecified")
    }

    val storeFilePath: String? = System.getenv("APK_STORE_FILE")
    signingConfigs {
        if (storeFilePath != null) {
            create("app") {
                storeFile = file(storeFilePath)
                storeType = System.getenv("APK_STORE_TYPE") ?: "PKCS12"
                storePassword = System.getenv("APK_STORE_PASSWORD")
                keyAlias = System.getenv("APK_KEY_ALIAS")
                keyPassword = System.getenv("APK_KEY_PASSWORD")
            }
        }
    }

    buildTypes {
        getByName("debug") {
            if (storeFilePath != null) signingConfig = signingConfigs.getByName("app")
        }
        getByName("release") {
            isMinifyEnabled = false
            if (storeFilePath != null) signingConfig = signingConfigs.getByName("app")
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
}
