package dev.leasehold;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.type.classreading.MetadataReaderFactory;
import org.springframework.core.type.classreading.SimpleMetadataReaderFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the build's API check (japicmp, lock-autoconfigure/pom.xml) takes for granted about package
 * {@code dev.leasehold}. japicmp reports an element added to an annotation as an abstract method added to a
 * class (siom79/japicmp#249), and the build lets that change pass, which is only right while every annotation
 * element has a default and no public class of the package is abstract.
 */
class PublicApiShapeTest {

    @Test
    void everyElementOfAPublicAnnotationHasADefaultSoAnAddedOneBreaksNoUsage() throws Exception {
        List<Class<?>> annotations = publicTypes().stream().filter(Class::isAnnotation).toList();
        assertThat(annotations).contains(DistributedLock.class);
        for (Class<?> annotation : annotations) {
            for (Method element : annotation.getDeclaredMethods()) {
                assertThat(element.getDefaultValue())
                    .as("@%s.%s() has no default: users who omit it no longer compile",
                            annotation.getSimpleName(), element.getName())
                    .isNotNull();
            }
        }
    }

    @Test
    void noPublicClassIsAbstractSoNoAbstractMethodCanBeAddedToOne() throws Exception {
        List<Class<?>> types = publicTypes();
        assertThat(types).contains(LockService.class, LockContext.class, LockLostEvent.class);
        assertThat(types)
            .filteredOn(type -> !type.isInterface() && Modifier.isAbstract(type.getModifiers()))
            .as("public abstract classes in dev.leasehold (remove the japicmp override of "
                    + "METHOD_ABSTRACT_ADDED_TO_CLASS in lock-autoconfigure/pom.xml before adding one)")
            .isEmpty();
    }

    /** The public top-level types of the package, read from where the main classes are (a directory or the jar). */
    private static List<Class<?>> publicTypes() throws IOException, ClassNotFoundException {
        String location = LockService.class.getProtectionDomain().getCodeSource().getLocation().toString();
        String pattern = (location.endsWith(".jar") ? "jar:" + location + "!/" : location) + "dev/leasehold/*.class";
        MetadataReaderFactory readers = new SimpleMetadataReaderFactory();
        List<Class<?>> types = new ArrayList<>();
        for (Resource resource : new PathMatchingResourcePatternResolver().getResources(pattern)) {
            String name = readers.getMetadataReader(resource).getClassMetadata().getClassName();
            Class<?> type = Class.forName(name, false, PublicApiShapeTest.class.getClassLoader());
            if (Modifier.isPublic(type.getModifiers()) && type.getEnclosingClass() == null) {
                types.add(type);
            }
        }
        return types;
    }
}
